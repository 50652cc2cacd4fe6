// `adops demo`: the whole pipeline end to end on the embedded emulator, in one process, ending
// with the example BI queries of sql/examples/ run against what it loaded.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import type { Pool } from 'pg';
import { createApiClientFromConfig } from '../api/client.js';
import type { Account } from '../config/accounts.js';
import { accountConfig, queueSchemaOf, serverDefaults, type Config } from '../config/env.js';
import { type RunningEmulator, DEMO_KEY, startEmulator } from '../emulator/index.js';
import { pullAccount } from '../queue/jobs.js';
import { loadJobs, type JobSet } from '../config/jobs.js';
import { queuePrefixOn } from '../config/connections.js';
import { packageRoot } from '../config/files.js';
import { runEntitySync } from '../catalogue/sync.js';
import type { Logger } from '../log/logger.js';
import { enqueueBackfill, waitForPulls, type PullProgress } from '../queue/enqueue.js';
import { addDays, localDate } from '../dates/calendar.js';
import { openQueues } from '../queue/queues.js';
import { collectStatus } from '../observe/status.js';
import { renderStatus } from '../observe/status-render.js';
import { startWorker } from '../worker/start.js';
import { createPool, ident, withTransaction, warehouseOf } from '../warehouse/pg.js';
import { setupWarehouse } from '../warehouse/schema/migrate.js';
import { claimDemoTarget, DEMO_PREFIX, DEMO_SCHEMA } from './target.js';

/** The demo's two accounts, each served by its own embedded emulator. */
const DEMO_ACCOUNTS = [
  { name: 'north', seed: 1 },
  { name: 'south', seed: 2 },
] as const;

interface DemoOptions {
  /**
   * Validated config; its API settings are replaced by the embedded emulator's, its schema and
   * queue prefix by the demo's own (production's are never written).
   */
  readonly config: Config;
  /** The demo's schema (default adops_demo); refused when it holds tables the demo did not create. */
  readonly schema?: string;
  /** The demo's queue prefix (default adops-demo); refused when it is ADOPS_QUEUE_PREFIX. */
  readonly queuePrefix?: string;
  /** Where its queues live (default postgres: the demo needs no Redis), in a schema of its own. */
  readonly queue?: Config['queue']['backend'];
  /** Job definitions; default: the shipped jobs/ folder. */
  readonly jobs?: JobSet;
  readonly logger: Logger;
  readonly out: (text: string) => void;
  /** Where the progress bar draws (a terminal), if anywhere. */
  readonly progress?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Days to backfill, ending yesterday (default 7). */
  readonly days?: number;
  /** Traffic cells per emulated day (default 2000). */
  readonly cellsPerDay?: number;
  readonly concurrency?: number;
}

interface DemoResult {
  readonly pulls: number;
  readonly failed: number;
  readonly campaigns: number;
  readonly creatives: number;
}

/**
 * Migrates, starts the emulator, syncs the catalogue, backfills the last `days` days of every
 * report with an in-process worker, prints the status and three BI queries, and closes all it
 * started. The tables it filled stay, so they can be queried afterwards; running it again reloads
 * the same periods in place.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { logger, out } = options;
  const jobs = options.jobs ?? loadJobs(join(packageRoot(), 'jobs'));
  // On a Redis Cluster the demo's prefix is hash-tagged like production's (config.queue.prefix).
  const target = {
    schema: options.schema ?? DEMO_SCHEMA,
    queuePrefix: queuePrefixOn(options.config.redis, options.queuePrefix ?? DEMO_PREFIX),
  };
  const pool = createPool(options.config, { max: 10, logger });
  try {
    await claimDemoTarget(pool, options.config, target);
  } catch (error) {
    await pool.end();
    throw error;
  }
  // Two accounts, each its own emulated ad server with its own data (seeds 1 and 2).
  const emulators = await Promise.all(
    DEMO_ACCOUNTS.map((a) =>
      startEmulator({ port: 0, seed: a.seed, cellsPerDay: options.cellsPerDay ?? 2000 }),
    ),
  );
  const rate = Math.max(options.config.queue.rateLimitPerSecond, 200);
  const accounts: Account[] = DEMO_ACCOUNTS.map((a, i) => ({
    name: a.name,
    baseUrl: (emulators[i] as RunningEmulator).url,
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
    schema: target.schema,
    queue: Object.freeze({
      ...options.config.queue,
      prefix: target.queuePrefix,
      backend: options.queue ?? 'postgres',
      schema: queueSchemaOf(target.schema, options.queuePrefix ?? DEMO_PREFIX, DEMO_PREFIX),
      rateLimitPerSecond: rate,
    }),
    accounts: Object.freeze(accounts),
    accountsFile: undefined,
  });
  const cleanups: Array<() => Promise<unknown>> = [
    ...emulators.map((e) => () => e.close()),
    () => pool.end(),
  ];
  try {
    for (const [i, a] of DEMO_ACCOUNTS.entries())
      out(
        `emulator of account ${a.name}: ${(emulators[i] as RunningEmulator).url} (key ${DEMO_KEY}, seed ${a.seed})\n`,
      );
    const setup = await setupWarehouse(warehouseOf(pool, config.schema, { logger }), {
      reports: jobs.reports,
    });
    out(
      `migrate: ${setup.applied.length} applied, ${setup.alreadyApplied} up to date; schema ${config.schema}\n`,
    );

    const catalogue = { campaigns: 0, creatives: 0 };
    for (const account of accounts) {
      const api = createApiClientFromConfig(accountConfig(config, account), logger);
      cleanups.unshift(() => api.close());
      const synced = await runEntitySync({
        wh: warehouseOf(pool, config.schema),
        account: account.name,
        api,
        logger,
      });
      catalogue.campaigns += synced.campaigns;
      catalogue.creatives += synced.creatives;
      out(`sync of account ${account.name}: ${synced.campaigns} campaigns, ${synced.creatives} creatives\n`);
    }

    const worker = await startWorker({
      config,
      jobs,
      pool,
      logger,
      concurrency: options.concurrency ?? 8,
      metrics: false,
    });
    cleanups.unshift(() => worker.close(10_000));
    const queues = await openQueues(config);
    cleanups.unshift(() => queues.close());

    const days = options.days ?? 7;
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const from = addDays(yesterday, 1 - days);
    const backfill = await enqueueBackfill(
      queues.pulls,
      jobs.reports,
      from,
      yesterday,
      'newest-first',
      accounts,
    );
    out(
      `backfill: ${backfill.pulls.length} pulls (${accounts.length} accounts x ${jobs.reports.length} reports x ${days} days, ${from}..${yesterday})\n`,
    );
    const bar = progressBar(options.progress);
    bar?.start(backfill.pulls.length, 0, { failed: 0, rate: '0.0', eta: '?' });
    const result = await waitForPulls(queues.pulls, backfill.pulls, {
      pollMs: 100,
      onProgress: (p: PullProgress) => bar?.update(p.done + p.failed, progressPayload(p)),
    });
    bar?.stop();
    out(`backfill: ${result.completed.length} loaded, ${result.failed.length} failed\n`);
    for (const f of result.failed)
      out(
        `  failed ${pullAccount(f.pull.data)}/${f.pull.data.report} ${f.pull.data.periodStart}: ${f.reason}\n`,
      );

    const status = await collectStatus(
      warehouseOf(pool, config.schema),
      jobs,
      queues,
      days,
      new Date(),
      accounts,
    );
    out('\n' + renderStatus(status) + '\n');
    for (const example of EXAMPLE_QUERIES) {
      const { columns, rows } = await runExample(pool, config.schema, example);
      out(`\n${example.title} (sql/examples/${example.file})\n${renderTable(columns, rows)}\n`);
    }
    await queues.pulls
      .obliterate({ force: true })
      .catch((error: unknown) => logger.warn({ err: error }, 'could not clear the demo queue'));
    return {
      pulls: backfill.pulls.length,
      failed: result.failed.length,
      campaigns: catalogue.campaigns,
      creatives: catalogue.creatives,
    };
  } finally {
    for (const cleanup of cleanups)
      await cleanup().catch((error: unknown) => logger.warn({ err: error }, 'demo cleanup failed'));
  }
}

function progressBar(stream: DemoOptions['progress']): cliProgress.SingleBar | undefined {
  if (stream === undefined) return undefined;
  return new cliProgress.SingleBar(
    {
      stream: stream as NodeJS.WritableStream,
      format: 'pulls [{bar}] {value}/{total} | failed {failed} | {rate}/s | ETA {eta}s',
      noTTYOutput: stream.isTTY !== true,
      notTTYSchedule: 2000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
}

function progressPayload(p: PullProgress): Record<string, string | number> {
  return {
    failed: p.failed,
    rate: p.ratePerSecond.toFixed(1),
    eta: p.etaSeconds === undefined ? '?' : Math.ceil(p.etaSeconds),
  };
}

/** An example BI query shipped in sql/examples/, shown by `adops demo`. */
interface ExampleQuery {
  readonly title: string;
  readonly file: string;
}

const EXAMPLE_QUERIES: readonly ExampleQuery[] = [
  { title: 'Top campaigns by impressions', file: 'top_campaigns.sql' },
  { title: 'Daily fill rate', file: 'daily_fill_rate.sql' },
  { title: 'Viewability by device', file: 'viewability_by_device.sql' },
];

interface QueryResult {
  readonly columns: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
}

/** Runs one example in `schema` (a transaction-local search_path, so the pool is left as it was). */
async function runExample(pool: Pool, schema: string, example: ExampleQuery): Promise<QueryResult> {
  const sql = readFileSync(join(packageRoot(), 'sql', 'examples', example.file), 'utf8');
  const client = await pool.connect();
  try {
    const result = await withTransaction(
      client,
      async () => {
        await client.query(`SET LOCAL search_path TO ${ident(schema)}, public`);
        return client.query({ text: sql, rowMode: 'array' });
      },
      { begin: 'BEGIN READ ONLY' },
    );
    return {
      columns: result.fields.map((f) => f.name),
      rows: (result.rows as unknown[][]).map((row) => row.map(cellText)),
    };
  } finally {
    client.release();
  }
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  // node-postgres reads a date column as local midnight: format it in local time, not UTC.
  if (value instanceof Date) {
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  }
  return String(value);
}

/** A result as a boxed terminal table; numbers right-aligned. */
function renderTable(columns: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const numeric = columns.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^-?\d+(\.\d+)?$/.test(r[i] ?? '')),
  );
  const table = new Table({
    head: [...columns],
    style: { head: [], border: [] },
    // No rule between body rows: results read as a compact grid.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    colAligns: numeric.map((n) => (n ? 'right' : 'left')),
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}
