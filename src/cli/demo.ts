// `adops demo`: the whole pipeline on embedded emulators, in one process and in a schema and queue prefix of
// its own (never production's), ending with the example BI queries of sql/examples/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClientFromConfig } from '../api/client.js';
import { runEntitySync } from '../catalogue/sync.js';
import { DEMO_KEY, startEmulator } from '../emulator/index.js';
import type { Account } from '../platform/config/accounts.js';
import { queuePrefixOn } from '../platform/config/connections.js';
import {
  accountConfig,
  PG_NAME_BYTES,
  queueSchemaOf,
  serverDefaults,
  type Config,
} from '../platform/config/env.js';
import { packageRoot } from '../platform/config/files.js';
import { loadJobs } from '../platform/config/jobs.js';
import { addDays, localDate } from '../platform/dates/calendar.js';
import type { Logger } from '../platform/log/logger.js';
import {
  execute,
  openWarehouse,
  withClient,
  withTransaction,
  type Warehouse,
} from '../platform/pg/handle.js';
import { pullAccount } from '../platform/queue/jobs.js';
import { openQueues } from '../platform/queue/queues.js';
import { enqueueBackfill, enqueuePulls, waitForPulls } from '../schedule/enqueue.js';
import { todayPulls } from '../plan/pulls.js';
import { claimSchema, setupWarehouse } from '../schema/migrate.js';
import { renderStatus } from '../status/render.js';
import { searchPathFor } from '../status/sql.js';
import { collectStatus } from '../status/status.js';
import { startWorker } from '../worker/start.js';
import { usageError } from './context.js';
import { etaText, progressView } from './progress.js';
import { gridTable } from './pull.js';

export const DEMO_SCHEMA = 'adops_demo';
export const DEMO_PREFIX = 'adops-demo';
/** The comment the demo puts on its schema: what tells it apart from a schema holding real data. */
const DEMO_SCHEMA_MARKER = 'adops demo data, written by `adops demo`; safe to drop';

/** The demo's two accounts, each served by its own embedded emulator. */
const DEMO_ACCOUNTS = [
  { name: 'north', seed: 1 },
  { name: 'south', seed: 2 },
] as const;

export interface DemoOptions {
  /** The product's config (loadConfig of the environment); the demo overrides only what sets it apart. */
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
  readonly days?: number; // Days to backfill, ending yesterday (default 7).
  readonly cellsPerDay?: number; // Traffic cells per emulated day (default 2000).
  readonly concurrency?: number;
}

/** The product's config with the demo's schema, queue and one account per emulator; refuses production's queue
 * prefix (the demo clears its queue) and a schema too long for its queue schema's name. */
function demoConfig(base: Config, options: DemoOptions, urls: readonly string[]): Config {
  const schema = options.schema ?? DEMO_SCHEMA;
  const own = options.queuePrefix ?? DEMO_PREFIX;
  // On a Redis Cluster the demo's prefix is hash-tagged like production's (config.queue.prefix).
  const prefix = queuePrefixOn(base.redis, own);
  const backend = options.queue ?? 'postgres';
  const queueSchema = queueSchemaOf(schema, own, DEMO_PREFIX);
  // Postgres silently cuts a longer name to 63 bytes (as ADOPS_SCHEMA's check in loadConfig says).
  if (backend === 'postgres' && Buffer.byteLength(queueSchema) > PG_NAME_BYTES)
    throw usageError(
      `the demo's --schema ${schema} is too long for its Postgres queue: the queue schema ` +
        `"${queueSchema}" would pass Postgres' ${PG_NAME_BYTES}-byte limit for a name; give a shorter --schema`,
    );
  if (prefix === base.queue.prefix)
    throw usageError(
      `the demo's queue prefix ${JSON.stringify(prefix)} is ADOPS_QUEUE_PREFIX, where production ` +
        'queues live: give the demo another with --queue-prefix',
    );
  const rateLimitPerSecond = Math.max(base.queue.rateLimitPerSecond, 200);
  const accounts: Account[] = DEMO_ACCOUNTS.map((a, i) => ({
    ...serverDefaults(base),
    name: a.name,
    baseUrl: urls[i],
    apiKey: DEMO_KEY,
    auth: 'bearer',
    rateLimitPerSecond,
    timezone: 'UTC',
    reports: undefined,
  }));
  const queue = { ...base.queue, backend, prefix, schema: queueSchema, rateLimitPerSecond };
  return { ...base, schema, queue, accounts, accountsFile: undefined, metricsPort: 0 };
}

/** Claims the schema: one with tables lacking the demo's mark is refused, so no real row is overwritten. */
async function claimTarget(wh: Warehouse): Promise<void> {
  const claim = await claimSchema(wh, DEMO_SCHEMA_MARKER);
  if (claim.claimed) return;
  const shown = claim.relations.join(', ') + (claim.relationCount > claim.relations.length ? ', ...' : '');
  throw usageError(
    `schema ${wh.schema} holds ${claim.relationCount} tables or other relations (${shown}) that adops demo ` +
      'did not create: the demo writes only to a schema of its own; give it another with --schema ' +
      `(default ${DEMO_SCHEMA})`,
  );
}

/** The demo (SUMMARIES.demo); it closes all it started, the tables stay, and a second run reloads in place. */
export async function runDemo(options: DemoOptions) {
  const { logger, out } = options;
  const jobs = loadJobs(join(packageRoot(), 'jobs'));
  // Checked before anything starts; the emulators' URLs are filled in once they listen.
  const planned = demoConfig(options.config, options, []);
  const wh = openWarehouse(planned, { max: 10, logger });
  const cleanups: Array<() => Promise<unknown>> = [() => wh.pool.end()];
  try {
    await claimTarget(wh);
    // Two accounts, each its own emulated ad server with its own data (seeds 1 and 2).
    const cellsPerDay = options.cellsPerDay ?? 2000;
    const emulators = await Promise.all(
      DEMO_ACCOUNTS.map((a) => startEmulator({ port: 0, seed: a.seed, cellsPerDay })),
    );
    cleanups.unshift(...emulators.map((e) => () => e.close()));
    const config = demoConfig(
      options.config,
      options,
      emulators.map((e) => e.url),
    );
    DEMO_ACCOUNTS.forEach((a, i) =>
      out(`emulator of account ${a.name}: ${emulators[i]?.url} (key ${DEMO_KEY}, seed ${a.seed})\n`),
    );
    const setup = await setupWarehouse(wh, { reports: jobs.reports, pacing: config.pacing });
    out(
      `migrate: ${setup.applied.length} applied, ${setup.alreadyApplied} up to date; schema ${wh.schema}\n`,
    );

    let campaigns = 0;
    for (const account of config.accounts) {
      const api = createApiClientFromConfig(accountConfig(config, account), logger);
      cleanups.unshift(() => api.close());
      const synced = await runEntitySync({ wh, account: account.name, api, logger });
      campaigns += synced.campaigns;
      out(`sync of account ${account.name}: ${synced.campaigns} campaigns, ${synced.creatives} creatives\n`);
    }

    const concurrency = options.concurrency ?? 8;
    const worker = await startWorker({ config, jobs, pool: wh.pool, logger, concurrency, metrics: false });
    cleanups.unshift(() => worker.close(10_000));
    const queues = await openQueues(config);
    cleanups.unshift(() => queues.close());

    const days = options.days ?? 7;
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const from = addDays(yesterday, 1 - days);
    const { accounts } = config;
    const { pulls } = await enqueueBackfill(
      queues.pulls,
      jobs.reports,
      from,
      yesterday,
      'newest-first',
      accounts,
    );
    out(
      `backfill: ${pulls.length} pulls (${accounts.length} accounts x ${jobs.reports.length} reports x ${days} days, ${from}..${yesterday}; ` +
        'consecutive days in one request)\n',
    );
    const format = 'pulls [{bar}] {value}/{total} | failed {failed} | {rate}/s | ETA {eta_s}';
    const bar = options.progress === undefined ? undefined : progressView(options.progress, format, 0, true);
    bar?.update(0, pulls.length, { failed: 0, rate: '0.0', eta_s: '?' });
    const result = await waitForPulls(queues.pulls, pulls, {
      pollMs: 100,
      onProgress: (p) =>
        bar?.update(p.done + p.failed, pulls.length, {
          failed: p.failed,
          rate: p.ratePerSecond.toFixed(1),
          eta_s: etaText(p.etaSeconds),
        }),
    });
    bar?.stop();
    out(`backfill: ${result.completed.length} loaded, ${result.failed.length} failed\n`);
    // Today too, provisional: loaded now, replaced by each refresh until a pull after midnight makes it final.
    const todays = await enqueuePulls(queues.pulls, todayPulls(jobs.reports, new Date(), accounts));
    const today = await waitForPulls(queues.pulls, todays, { pollMs: 100 });
    out(`today, provisional: ${today.completed.length} loaded, ${today.failed.length} failed\n`);
    for (const { pull, reason } of [...result.failed, ...today.failed])
      out(`  failed ${pullAccount(pull.data)}/${pull.data.report} ${pull.data.periodStart}: ${reason}\n`);

    out(`\n${renderStatus(await collectStatus(wh, jobs, queues, days, new Date(), accounts))}\n`);
    for (const example of EXAMPLE_QUERIES)
      out(`\n${example.title} (sql/examples/${example.file})\n${await exampleTable(wh, example.file)}\n`);
    await queues.pulls
      .obliterate({ force: true })
      .catch((error: unknown) => logger.warn({ err: error }, 'could not clear the demo queue'));
    return { pulls: pulls.length, failed: result.failed.length + today.failed.length, campaigns };
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
  { title: 'Campaigns behind their goal', file: 'campaigns_behind.sql' },
];

/** One example run read-only in the warehouse's schema as a terminal table, values as Postgres prints them. */
async function exampleTable(wh: Warehouse, file: string): Promise<string> {
  const text = readFileSync(join(packageRoot(), 'sql', 'examples', file), 'utf8');
  const result = await withClient(wh.pool, (client) =>
    withTransaction(
      client,
      async () => {
        await execute(client, searchPathFor(wh.schema));
        return client.query<Array<string | null>>({
          text,
          rowMode: 'array',
          types: { getTypeParser: () => (value: string) => value },
        });
      },
      { begin: 'BEGIN READ ONLY' },
    ),
  );
  const rows = result.rows.map((row) => row.map((value) => value ?? ''));
  const numeric = result.fields.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^-?\d+(\.\d+)?$/.test(r[i] ?? '')),
  );
  const table = gridTable(
    result.fields.map((f) => f.name),
    numeric.map((n) => (n ? 'right' : 'left')),
  );
  table.push(...rows);
  return table.toString();
}
