// The commands that shape the warehouse: `adops migrate`, `adops evolve` (a report's table versions while its
// dimensions change) and `adops replay` (an archived response loaded again, without the API).
import { InvalidArgumentError, type Command } from 'commander';
import { secretsOf } from '../platform/config/env.js';
import { enqueueEvolution } from '../evolution/evolution.js';
import { coverage, dropRetired, swapVersion, type Coverage } from '../evolution/evolution.js';
import { setupWarehouse, type SetupResult } from '../schema/migrate.js';
import { openWarehouse, withClient, type Warehouse } from '../platform/pg/handle.js';
import { migrateQueueSchema } from '../platform/queue/backend.js';
import { BI_ROLE_NAME, describeBiRole, reservedBiRole, setupBiRole } from '../schema/bi-role.js';
import { replayLoad } from '../pull/run.js';
import { SchemaRefusal, readVersions } from '../schema/versions.js';
import { refusedViewLine } from '../schema/views.js';
import {
  cannotConnect,
  CommandFailed,
  SUMMARIES,
  usageError,
  withQueues,
  withWarehouse,
  type CliContext,
} from './context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description(SUMMARIES.migrate)
    .option(
      '--no-swap-when-covered',
      'a changed report keeps serving its old version until `adops evolve --swap` (default: switch once covered)',
    )
    .option(
      '--bi-role <name>',
      'grant this role (created if absent) read-only access to the bi_ views, dim_date and the catalogue; ' +
        'refuses a role that can write or read more (superuser, owner, pg_write_all_data, ...)',
      (v: string) => (BI_ROLE_NAME.test(v) ? v : invalid('a role name: lower case letters, digits, _')),
    )
    .action(async (flags: { swapWhenCovered: boolean; biRole?: string }) => {
      const reserved = flags.biRole === undefined ? undefined : reservedBiRole(flags.biRole);
      if (reserved !== undefined) throw usageError(`--bi-role ${flags.biRole}: ${reserved}`);
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      // No statement timeout: a migration may rewrite a big table, and a second run waits on the lock.
      const wh = openWarehouse(config, { max: 1, logger: ctx.logger(), statementTimeoutMs: 0 });
      const say = (lines: readonly string[]) => ctx.stdout.write(lines.map((l) => `${l}\n`).join(''));
      try {
        const result = await setupWarehouse(wh, {
          reports,
          autoSwap: flags.swapWhenCovered,
          pacing: config.pacing,
        });
        say(describe(result, wh.schema));
        if (config.queue.backend === 'postgres') {
          await withClient(wh.pool, (client) => migrateQueueSchema(client, config));
          say([`queue schema ${config.queue.schema}: up to date (BullMQ's migrations)`]);
        }
        if (flags.biRole !== undefined) say(describeBiRole(await setupBiRole(wh, flags.biRole), wh.schema));
        await planEvolving(ctx, wh, result);
      } catch (error) {
        if (error instanceof SchemaRefusal) throw new CommandFailed(error.message, { cause: error });
        throw cannotConnect(error) ?? error;
      } finally {
        await wh.pool.end();
      }
    });
}

/** Per report with changed dimensions: its progress, its missing history enqueued newest first (or how). */
async function planEvolving(ctx: CliContext, wh: Warehouse, result: SetupResult): Promise<void> {
  const states: Coverage[] = [];
  for (const e of result.tables.evolving) {
    const state = await coverage(wh, e.report);
    if (state === undefined) continue;
    states.push(state);
    ctx.stdout.write(
      `${e.started ? 'started' : 'continues'}: ${e.report} loads version ${e.to} (${wh.schema}.${e.table}); ` +
        `report_${e.report} serves version ${e.from} meanwhile\n${progressLine(state)}\n`,
    );
  }
  if (states.length === 0) return;
  try {
    ctx.stdout.write(`${await planEvolution(ctx, states)}\n`);
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
  for (const v of result.views) if (v.status === 'refused') lines.push(refusedViewLine(v));
  const { pacing } = result;
  if (pacing.changed)
    lines.push(
      pacing.report === undefined
        ? `bi_campaign_pacing reads no report: ${pacing.why}`
        : `bi_campaign_pacing reads report_${pacing.report}: ${pacing.named ? 'ADOPS_PACING_REPORT names it' : 'it has day and campaign_id and the fewest other dimensions (ADOPS_PACING_REPORT may name another)'}`,
    );
  for (const d of result.dailyViews) {
    if (d.status === 'no-day')
      lines.push(`no ${d.view}: the rows of ${d.report} have no day (add the day dimension for one)`);
    if (d.status === 'name-taken')
      lines.push(`no ${d.view}: the report ${d.report}_daily has that name for its own view`);
  }
  return lines;
}

interface EvolveFlags {
  readonly report?: string;
  readonly plan: boolean;
  readonly swap: boolean;
  readonly dropOld: boolean;
}

export function registerEvolve(program: Command, ctx: CliContext): void {
  program
    .command('evolve')
    .description(SUMMARIES.evolve)
    .option('--report <name>', 'only this report')
    .option('--plan', 'enqueue the periods the new version still lacks, newest first', false)
    .option('--swap', 'switch report_<name> and its bi_ views to the new version now, covered or not', false)
    .option('--drop-old', 'drop the tables of replaced versions', false)
    .addHelpText(
      'after',
      "\nChange a report's dimensions in its YAML and run `adops migrate`: the new shape gets a new table " +
        'version, loaded beside the old one (migrate enqueues its history, newest first). report_<name> and ' +
        'bi_<name> keep serving the old version until the new one covers every period the old one had; ' +
        'then they switch in one transaction (unless migrate ran with --no-swap-when-covered).',
    )
    .action(async (flags: EvolveFlags) => {
      const jobs = ctx.jobs().reports;
      const reports = flags.report === undefined ? jobs : jobs.filter((r) => r.name === flags.report);
      if (flags.report !== undefined && reports.length === 0)
        throw usageError(`--report: no job definition is named "${flags.report}"`);
      await withWarehouse(ctx, 2, async (wh) => {
        const { pool, schema } = wh;
        for (const report of reports) {
          if (flags.swap) {
            const swapped = await withClient(pool, (client) =>
              swapVersion(client, wh, report, { force: true }),
            );
            if (swapped !== undefined) {
              ctx.stdout.write(`${report.name}: now serves version ${swapped.to} (was ${swapped.from})\n`);
              for (const v of swapped.refused) ctx.stdout.write(`${refusedViewLine(v)}\n`);
            }
          }
          if (flags.dropOld)
            for (const table of await withClient(pool, (client) => dropRetired(client, wh, report.name)))
              ctx.stdout.write(`${report.name}: dropped ${schema}.${table}\n`);
        }
        const states = (await Promise.all(reports.map((r) => coverage(wh, r.name)))).filter(
          (c): c is Coverage => c !== undefined,
        );
        if (flags.plan) ctx.stdout.write(`${await planEvolution(ctx, states)}\n`);
        const versions = await readVersions(wh);
        for (const report of reports) {
          const mine = versions.filter((v) => v.report === report.name);
          const retired = mine.filter((v) => v.state === 'retired').map((v) => v.table);
          const state = states.find((c) => c.report === report.name);
          const line =
            state === undefined
              ? `${report.name}: version ${mine.find((v) => v.state === 'serving')?.version ?? 1}` +
                (retired.length > 0 ? ` (replaced: ${retired.join(', ')})` : '')
              : progressLine(state);
          ctx.stdout.write(`${line}\n`);
        }
      });
    });
}

/** `daily_campaign: version 1 -> 2, 12 of 30 periods in the new shape (next: 2026-01-19 ...)`. */
function progressLine(c: Coverage): string {
  const next = c.missing
    .slice(0, 3)
    .map((p) => p.start)
    .join(', ');
  return (
    `${c.report}: version ${c.serving.version} -> ${c.building.version}, ${c.covered} of ${c.periods} periods ` +
    `in the new shape${c.missing.length > 0 ? ` (still to load, newest first: ${next}${c.missing.length > 3 ? ', ...' : ''})` : ', ready to switch'}`
  );
}

/** Enqueues what the building versions lack; a line saying what was done, or why not. */
async function planEvolution(ctx: CliContext, states: readonly Coverage[]): Promise<string> {
  if (states.length === 0) return 'no report is evolving';
  return withQueues(
    ctx,
    async (queues) => {
      const pulls = await enqueueEvolution(queues.pulls, states);
      const added = pulls.filter((p) => p.added).length;
      return `enqueued ${added} pulls of the new shapes, newest first (${pulls.length - added} were already waiting)`;
    },
    '; run adops evolve --plan once Redis answers',
  );
}

export function registerReplay(program: Command, ctx: CliContext): void {
  program
    .command('replay')
    .description(SUMMARIES.replay)
    .requiredOption('--load-id <n>', 'load_id from report_loads whose raw body to replay')
    .option('--strict-reconcile', 'fail when the rows do not sum to the totals', false)
    .action(async (flags: { loadId: string; strictReconcile: boolean }) => {
      if (!/^[1-9]\d{0,15}$/.test(flags.loadId))
        throw usageError(
          `--load-id ${JSON.stringify(flags.loadId)} is not a load_id: expected a positive whole number`,
        );
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const loadId = Number(flags.loadId);
      await withWarehouse(ctx, 2, async (wh) => {
        const outcome = await replayLoad(
          { ...wh, logger: wh.logger?.child({ replayOf: loadId }) },
          reports,
          loadId,
          { strictReconcile: flags.strictReconcile, secrets: secretsOf(config) },
        );
        const reconciled = outcome.reconciled
          ? 'reconciled'
          : outcome.unreconciledReason === 'no totals'
            ? 'NOT reconciled: no totals'
            : `NOT reconciled (${outcome.unreconciledReason ?? 'mismatch'}): ${JSON.stringify(outcome.mismatch)}`;
        ctx.stdout.write(
          outcome.status === 'loaded'
            ? `load ${loadId} replayed as load ${outcome.loadId}: ${outcome.rows} rows, ${reconciled}\n`
            : `load ${loadId} replayed as load ${outcome.loadId}: superseded, a newer response of the period is loaded; nothing changed\n`,
        );
      }).catch((error: unknown) => {
        // Our own errors (replay's, the loader's) are one line; a bare Error is a bug worth its stack.
        if (error instanceof Error && !(error instanceof CommandFailed) && error.name !== 'Error')
          throw new CommandFailed(error.message, { cause: error });
        throw error;
      });
    });
}

function invalid(expected: string): never {
  throw new InvalidArgumentError(`expected ${expected}`);
}
