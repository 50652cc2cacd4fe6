import type { Command } from 'commander';
import { SchemaDriftError } from '../../warehouse/errors.js';
import { MigrationError } from '../../warehouse/migrate.js';
import { createPool } from '../../warehouse/pool.js';
import { setupWarehouse, type SetupResult } from '../../warehouse/setup.js';
import { CommandFailed, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';

/** `adops migrate`: the sql/ migrations, a report_<name> table per job definition, the BI views. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description(SUMMARIES.migrate)
    .action(async () => {
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const logger = ctx.logger();
      // No statement timeout: a migration may rewrite a big table, and a second run waits on the lock.
      const pool = createPool(config, { max: 1, logger, statementTimeoutMs: 0 });
      try {
        const result = await setupWarehouse(pool, { schema: config.schema, reports, logger });
        for (const line of describe(result, config.schema)) ctx.stdout.write(`${line}\n`);
      } catch (error) {
        if (error instanceof MigrationError || error instanceof SchemaDriftError)
          throw new CommandFailed(error.message, { cause: error });
        const code = (error as { code?: string }).code;
        if (code !== undefined && /^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ENOENT|28P01|28000|3D000)$/.test(code))
          throw new CommandFailed(
            `cannot connect to Postgres (${code}: ${(error as Error).message}); check DATABASE_URL or the PG* variables`,
            { cause: error },
          );
        throw error;
      } finally {
        await pool.end();
      }
    });
}

/** What a run did, one line each, for stdout. */
function describe(result: SetupResult, schema: string): string[] {
  const lines = result.applied.map((file) => `applied ${file}`);
  if (result.applied.length === 0)
    lines.push(`migrations up to date (${result.alreadyApplied} applied before)`);
  for (const t of result.tables.created) lines.push(`created ${schema}.${t}`);
  for (const ix of result.tables.indexesAdded) lines.push(`re-created index ${ix}`);
  for (const ix of result.tables.indexesRebuilt)
    lines.push(`rebuilt index ${ix}: text values are now keyed by their md5, so values of any length load`);
  for (const t of result.tables.orphaned)
    lines.push(`kept ${schema}.${t}: no job definition uses it any more (drop it yourself if unwanted)`);
  for (const v of result.views) {
    if (v.status === 'missing-columns')
      lines.push(`skipped the view of ${v.report}: its table lacks ${(v.missing ?? []).join(', ')}`);
  }
  return lines;
}
