// `adops demo`: the whole pipeline on embedded emulators, in one process and in a schema and queue prefix of
// its own (never production's), ending with the example BI queries of sql/examples/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import type { Pool } from 'pg';
import { createApiClientFromConfig } from '../api/client.js';
import type { Account } from '../platform/config/accounts.js';
import {
  accountConfig,
  PG_NAME_BYTES,
  queueSchemaOf,
  serverDefaults,
  type Config,
} from '../platform/config/env.js';
import { DEMO_KEY, startEmulator } from '../emulator/index.js';
import { pullAccount } from '../platform/queue/jobs.js';
import { loadJobs } from '../platform/config/jobs.js';
import { queuePrefixOn } from '../platform/config/connections.js';
import { packageRoot } from '../platform/config/files.js';
import { runEntitySync } from '../catalogue/sync.js';
import type { Logger } from '../platform/log/logger.js';
import { enqueueBackfill, waitForPulls } from '../schedule/enqueue.js';
import { addDays, localDate } from '../platform/dates/calendar.js';
import { openQueues } from '../platform/queue/queues.js';
import { collectStatus } from '../status/status.js';
import { renderStatus } from '../status/render.js';
import { startWorker } from '../worker/start.js';
import {
  createPool,
  ident,
  withClient,
  withTransaction,
  warehouseOf,
  type Warehouse,
} from '../platform/pg/handle.js';
import { TerminalError } from '../platform/retry/errors.js';
import { claimSchema, setupWarehouse } from '../schema/migrate.js';

/** The demo's schema unless `--schema` names another. */
export const DEMO_SCHEMA = 'adops_demo';
/** The demo's queue prefix unless `--queue-prefix` names another. */
export const DEMO_PREFIX = 'adops-demo';
/** The comment the demo puts on its schema: what tells it apart from a schema holding real data. */
const DEMO_SCHEMA_MARKER = 'adops demo data, written by `adops demo`; safe to drop';

/** The demo would write where it must not: names the place and says what to do instead. */
export class DemoRefused extends TerminalError {
  override name = 'DemoRefused';
}

/** Refuses production's queue prefix (the demo clears its queue), then claims the schema: one holding tables
 * without the demo's mark is refused, so no real row is ever overwritten or soft-deleted. */
async function claimTarget(wh: Warehouse, config: Config, queuePrefix: string): Promise<void> {
  // Postgres silently cuts a longer name to 63 bytes (as ADOPS_SCHEMA's check in loadConfig says).
  if (config.queue.backend === 'postgres' && Buffer.byteLength(config.queue.schema) > PG_NAME_BYTES)
    throw new DemoRefused(
      `the demo's --schema ${wh.schema} is too long for its Postgres queue: the queue schema ` +
        `"${config.queue.schema}" would pass Postgres' ${PG_NAME_BYTES}-byte limit for a name; give a shorter --schema`,
    );
  if (queuePrefix === config.queue.prefix)
    throw new DemoRefused(
      `the demo's queue prefix ${JSON.stringify(queuePrefix)} is ADOPS_QUEUE_PREFIX, where production ` +
        'queues live: give the demo another with --queue-prefix',
    );
  const claim = await claimSchema(wh, DEMO_SCHEMA_MARKER);
  if (claim.claimed) return;
  const shown = claim.relations.join(', ') + (claim.relationCount > claim.relations.length ? ', ...' : '');
  throw new DemoRefused(
    `schema ${wh.schema} holds ${claim.relationCount} tables or other relations (${shown}) that adops demo ` +
      'did not create: the demo writes only to a schema of its own; give it another with --schema ' +
      `(default ${DEMO_SCHEMA})`,
  );
}

/** The demo's two accounts, each served by its own embedded emulator. */
const DEMO_ACCOUNTS = [
  { name: 'north', seed: 1 },
  { name: 'south', seed: 2 },
] as const;

export interface DemoOptions {
  /** Validated config; the demo swaps in the emulators' API settings and its own schema and prefix. */
  readonly config: Config;
  /** The demo's schema (default adops_demo); refused when it holds tables the demo did not create. */
  readonly schema?: string;
  /** The demo's queue prefix (default adops-demo); refused when it is ADOPS_QUEUE_PREFIX. */
  readonly queuePrefix?: string;
  /** Where its queues live (default postgres: the demo needs no Redis), in a schema of its own. */
  readonly queue?: Config['queue']['backend'];
  readonly logger: Logger;
  readonly out: (text: string) => void;
  /** Where the progress bar draws, if anywhere. */
  readonly progress?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Days to backfill, ending yesterday (default 7). */
  readonly days?: number;
  /** Traffic cells per emulated day (default 2000). */
  readonly cellsPerDay?: number;
  readonly concurrency?: number;
}

/** Migrates, syncs, backfills `days` days of every report with an in-process worker, prints the status and
 * the BI queries, and closes all it started; the tables stay, and a second run reloads the same periods in
 * place. */
export async function runDemo(options: DemoOptions) {
  const { logger, out } = options;
  const jobs = loadJobs(join(packageRoot(), 'jobs'));
  const schema = options.schema ?? DEMO_SCHEMA;
  // On a Redis Cluster the demo's prefix is hash-tagged like production's (config.queue.prefix).
  const prefix = queuePrefixOn(options.config.redis, options.queuePrefix ?? DEMO_PREFIX);
  const pool = createPool(options.config, { max: 10, logger });
  const cleanups: Array<() => Promise<unknown>> = [() => pool.end()];
  try {
    const wh = warehouseOf(pool, schema, { logger });
    const queue = {
      backend: options.queue ?? 'postgres',
      schema: queueSchemaOf(schema, options.queuePrefix ?? DEMO_PREFIX, DEMO_PREFIX),
    } as const;
    await claimTarget(wh, { ...options.config, queue: { ...options.config.queue, ...queue } }, prefix);
    // Two accounts, each its own emulated ad server with its own data (seeds 1 and 2).
    const servers = await Promise.all(
      DEMO_ACCOUNTS.map(async (a) => ({
        ...a,
        emulator: await startEmulator({ port: 0, seed: a.seed, cellsPerDay: options.cellsPerDay ?? 2000 }),
      })),
    );
    cleanups.unshift(...servers.map((a) => () => a.emulator.close()));
    const rate = Math.max(options.config.queue.rateLimitPerSecond, 200);
    const accounts: Account[] = servers.map((a) => ({
      name: a.name,
      baseUrl: a.emulator.url,
      apiKey: DEMO_KEY,
      ...serverDefaults(options.config),
      auth: 'bearer' as const,
      rateLimitPerSecond: rate,
      timezone: 'UTC',
      reports: undefined,
    }));
    const config: Config = Object.freeze({
      ...options.config,
      baseUrl: accounts[0]?.baseUrl,
      apiKey: DEMO_KEY,
      auth: 'bearer' as const,
      metricsPort: 0,
      schema,
      queue: Object.freeze({
        ...options.config.queue,
        ...queue,
        prefix,
        rateLimitPerSecond: rate,
      }),
      accounts: Object.freeze(accounts),
      accountsFile: undefined,
    });
    for (const a of servers)
      out(`emulator of account ${a.name}: ${a.emulator.url} (key ${DEMO_KEY}, seed ${a.seed})\n`);
    const setup = await setupWarehouse(wh, { reports: jobs.reports });
    out(`migrate: ${setup.applied.length} applied, ${setup.alreadyApplied} up to date; schema ${schema}\n`);

    let campaigns = 0;
    for (const account of accounts) {
      const api = createApiClientFromConfig(accountConfig(config, account), logger);
      cleanups.unshift(() => api.close());
      const synced = await runEntitySync({ wh, account: account.name, api, logger });
      campaigns += synced.campaigns;
      out(`sync of account ${account.name}: ${synced.campaigns} campaigns, ${synced.creatives} creatives\n`);
    }

    const concurrency = options.concurrency ?? 8;
    const worker = await startWorker({ config, jobs, pool, logger, concurrency, metrics: false });
    cleanups.unshift(() => worker.close(10_000));
    const queues = await openQueues(config);
    cleanups.unshift(() => queues.close());

    const days = options.days ?? 7;
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const from = addDays(yesterday, 1 - days);
    const { pulls } = await enqueueBackfill(
      queues.pulls,
      jobs.reports,
      from,
      yesterday,
      'newest-first',
      accounts,
    );
    out(
      `backfill: ${pulls.length} pulls (${accounts.length} accounts x ${jobs.reports.length} reports x ${days} days, ${from}..${yesterday})\n`,
    );
    const bar =
      options.progress === undefined
        ? undefined
        : new cliProgress.SingleBar(
            {
              stream: options.progress,
              // Our own ETA, `eta_s`: cli-progress fills `{eta}` with its own, INF before any pull ends.
              format: 'pulls [{bar}] {value}/{total} | failed {failed} | {rate}/s | ETA {eta_s}',
              noTTYOutput: options.progress.isTTY !== true,
              notTTYSchedule: 2000,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
    bar?.start(pulls.length, 0, { failed: 0, rate: '0.0', eta_s: '?' });
    const result = await waitForPulls(queues.pulls, pulls, {
      pollMs: 100,
      onProgress: (p) =>
        bar?.update(p.done + p.failed, {
          failed: p.failed,
          rate: p.ratePerSecond.toFixed(1),
          eta_s: p.etaSeconds === undefined ? '?' : `${Math.ceil(p.etaSeconds)}s`,
        }),
    });
    bar?.stop();
    out(`backfill: ${result.completed.length} loaded, ${result.failed.length} failed\n`);
    for (const { pull, reason } of result.failed)
      out(`  failed ${pullAccount(pull.data)}/${pull.data.report} ${pull.data.periodStart}: ${reason}\n`);

    out(`\n${renderStatus(await collectStatus(wh, jobs, queues, days, new Date(), accounts))}\n`);
    for (const example of EXAMPLE_QUERIES) {
      const table = await exampleTable(pool, schema, example.file);
      out(`\n${example.title} (sql/examples/${example.file})\n${table}\n`);
    }
    await queues.pulls
      .obliterate({ force: true })
      .catch((error: unknown) => logger.warn({ err: error }, 'could not clear the demo queue'));
    return { pulls: pulls.length, failed: result.failed.length, campaigns };
  } finally {
    for (const cleanup of cleanups)
      await cleanup().catch((error: unknown) => logger.warn({ err: error }, 'demo cleanup failed'));
  }
}

/** The example BI queries shipped in sql/examples/, shown by `adops demo`. */
const EXAMPLE_QUERIES = [
  { title: 'Top campaigns by impressions', file: 'top_campaigns.sql' },
  { title: 'Daily fill rate', file: 'daily_fill_rate.sql' },
  { title: 'Viewability by device', file: 'viewability_by_device.sql' },
];

/** One example run in `schema` (a transaction-local search_path) as a terminal table, values as Postgres
 * prints them. */
async function exampleTable(pool: Pool, schema: string, file: string): Promise<string> {
  const sql = readFileSync(join(packageRoot(), 'sql', 'examples', file), 'utf8');
  const result = await withClient(pool, (client) =>
    withTransaction(
      client,
      async () => {
        await client.query(`SET LOCAL search_path TO ${ident(schema)}, public`);
        return client.query<Array<string | null>>({
          text: sql,
          rowMode: 'array',
          types: { getTypeParser: () => (text: string) => text },
        });
      },
      { begin: 'BEGIN READ ONLY' },
    ),
  );
  const rows = result.rows.map((row) => row.map((value) => value ?? ''));
  const numeric = result.fields.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^-?\d+(\.\d+)?$/.test(r[i] ?? '')),
  );
  const table = new Table({
    head: result.fields.map((f) => f.name),
    style: { head: [], border: [] },
    // No rule between body rows: results read as a compact grid.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    colAligns: numeric.map((n) => (n ? 'right' : 'left')),
  });
  table.push(...rows);
  return table.toString();
}
