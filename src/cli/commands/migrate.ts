import { InvalidArgumentError, type Command } from 'commander';
import type { Pool } from 'pg';
import type { Config } from '../../config/env.js';
import { BI_ROLE_NAME, describeBiRole, setupBiRole } from '../../warehouse/schema/bi-role.js';
import { coverage, type Coverage } from '../../warehouse/schema/evolution.js';
import { SchemaDriftError } from '../../warehouse/errors.js';
import { MigrationError, type SetupResult, setupWarehouse } from '../../warehouse/schema/migrate.js';
import { createPool, warehouseOf } from '../../warehouse/pg.js';
import { CommandFailed, type CliContext } from '../context.js';
import { planEvolution, progressLine } from './evolve.js';
import { cannotConnect } from './postgres-failure.js';
import { SUMMARIES } from './summaries.js';

/** `adops migrate`: the sql/ migrations, a report_<name> table per job definition, the BI views. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description(SUMMARIES.migrate)
    .option(
      '--no-swap-when-covered',
      'a changed report keeps serving its old version until `adops evolve --swap` (default: switch once covered)',
    )
    .option(
      '--bi-role <name>',
      'grant this role (created if absent) read-only access to the bi_ views, dim_date and the catalogue',
      (v: string) => (BI_ROLE_NAME.test(v) ? v : invalid('a role name: lower case letters, digits, _')),
    )
    .action(async (flags: { swapWhenCovered: boolean; biRole?: string }) => {
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const logger = ctx.logger();
      // No statement timeout: a migration may rewrite a big table, and a second run waits on the lock.
      const pool = createPool(config, { max: 1, logger, statementTimeoutMs: 0 });
      try {
        const result = await setupWarehouse(warehouseOf(pool, config.schema, { logger }), {
          reports,
          autoSwap: flags.swapWhenCovered,
        });
        for (const line of describe(result, config.schema)) ctx.stdout.write(`${line}\n`);
        if (flags.biRole !== undefined)
          for (const line of describeBiRole(
            await setupBiRole(pool, config.schema, flags.biRole),
            config.schema,
          ))
            ctx.stdout.write(`${line}\n`);
        await planEvolving(ctx, pool, result, config);
      } catch (error) {
        if (error instanceof MigrationError || error instanceof SchemaDriftError)
          throw new CommandFailed(error.message, { cause: error });
        throw cannotConnect(error) ?? error;
      } finally {
        await pool.end();
      }
    });
}

/**
 * For each report whose dimensions changed: its progress, and its missing history enqueued newest
 * first (or how to enqueue it when Redis does not answer).
 */
async function planEvolving(ctx: CliContext, pool: Pool, result: SetupResult, config: Config): Promise<void> {
  const states: Coverage[] = [];
  for (const e of result.tables.evolving) {
    const state = await coverage(pool, config.schema, e.report);
    if (state === undefined) continue;
    states.push(state);
    ctx.stdout.write(
      `${e.started ? 'started' : 'continues'}: ${e.report} loads version ${e.to} (${config.schema}.${e.table}); ` +
        `report_${e.report} serves version ${e.from} meanwhile\n${progressLine(state)}\n`,
    );
  }
  if (states.length === 0) return;
  try {
    ctx.stdout.write(`${await planEvolution(config, states)}\n`);
  } catch (error) {
    if (!(error instanceof CommandFailed)) throw error;
    ctx.stderr.write(`adops: ${error.message}\n`);
  }
}

/** What a run did, one line each, for stdout. */
function describe(result: SetupResult, schema: string): string[] {
  const lines = result.applied.map((file) => `applied ${file}`);
  if (result.applied.length === 0)
    lines.push(`migrations up to date (${result.alreadyApplied} applied before)`);
  for (const t of result.tables.created) lines.push(`created ${schema}.${t}`);
  for (const ix of result.tables.indexesAdded) lines.push(`re-created index ${ix}`);
  if (result.partitions.made.length > 0)
    lines.push(`made ${result.partitions.made.length} monthly partitions ahead`);
  for (const d of result.partitions.dropped)
    lines.push(
      `dropped ${schema}.${d.partition} (${d.from}..${d.to}, before ${d.report}'s retention_months)`,
    );
  for (const t of result.tables.orphaned)
    lines.push(`kept ${schema}.${t}: no job definition uses it any more (drop it yourself if unwanted)`);
  for (const v of result.views) {
    if (v.status === 'missing-columns')
      lines.push(`skipped the view of ${v.report}: its table lacks ${(v.missing ?? []).join(', ')}`);
  }
  for (const d of result.dailyViews) {
    if (d.status === 'no-day')
      lines.push(`no ${d.view}: the rows of ${d.report} have no day (add the day dimension for one)`);
    if (d.status === 'name-taken')
      lines.push(`no ${d.view}: the report ${d.report}_daily has that name for its own view`);
  }
  return lines;
}

function invalid(expected: string): never {
  throw new InvalidArgumentError(`expected ${expected}`);
}
