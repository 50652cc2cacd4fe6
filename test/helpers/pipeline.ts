// The pipeline as the tests run it, in one place: the loader as a worker's pull calls it once a body
// is fetched (load.ts, kept apart only because the bench's children import it and measure their
// memory), a harness of database, emulator, queues and in-process workers, and a worker whose log
// lines are captured (the reliability cases). Child processes import it too, so nothing here may
// start anything at import time.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../src/api/client.js';
import { startEmulator, type FaultOptions, type RunningEmulator } from '../../src/emulator/index.js';
import { loadConfig, type Config } from '../../src/platform/config/env.js';
import { packageRoot } from '../../src/platform/config/files.js';
import { loadJobs, type JobSet, type ReportJob } from '../../src/platform/config/jobs.js';
import { addDays, localDate } from '../../src/platform/dates/calendar.js';
import { createLogger, type Logger } from '../../src/platform/log/logger.js';
import { openQueues, type Queues } from '../../src/platform/queue/queues.js';
import type { ReportFetcher } from '../../src/pull/run.js';
import { startWorker, type RunningWorker, type WorkerDeps } from '../../src/worker/start.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from './db.js';
import { REDIS_URL, testPrefix } from './redis.js';
import { QUEUE_ENV } from './services.js';

export * from './load.js';

// ---------------------------------------------------------------------------------------------------
// Workers in this process, as `adops worker` starts them, with the tests' short backoffs.

/** The repository's jobs/ folder. */
export const jobsDir = (): string => join(packageRoot(), 'jobs');

export const quietLogger = createLogger({ level: 'silent', secrets: [] });

/** The env every pipeline of the tests shares: its stores, its API and its prefix; metrics off. */
function pipelineEnv(o: {
  baseUrl: string;
  apiKey: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
}): Record<string, string> {
  return {
    ADOPS_BASE_URL: o.baseUrl,
    ADOPS_API_KEY: o.apiKey,
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_QUEUE_PREFIX: o.prefix,
    ADOPS_METRICS_PORT: '0',
    ...QUEUE_ENV,
  };
}

/** A worker of `config` in this process: no metrics server, retries `backoff` apart. */
function inProcessWorker(
  deps: Pick<WorkerDeps, 'config' | 'jobs' | 'pool' | 'logger' | 'concurrency' | 'backoff'> &
    Partial<WorkerDeps>,
): Promise<RunningWorker> {
  return startWorker({ metrics: false, ...deps });
}

// ---------------------------------------------------------------------------------------------------
// The harness: a fresh database, BullMQ prefix and emulator, the Config/env the CLI and in-process
// workers get. Everything is closed by `close()`.

export interface Harness {
  readonly db: TestDatabase;
  readonly emulator: RunningEmulator;
  readonly prefix: string;
  readonly env: Record<string, string>;
  readonly config: Config;
  readonly jobs: JobSet;
  readonly queues: Queues;
  /** Starts an in-process worker (closed by close()). */
  worker(extra?: Partial<WorkerDeps>): Promise<RunningWorker>;
  close(): Promise<void>;
}

/** A harness over a fresh database, prefix and emulator. */
export async function createHarness(
  options: { faults?: FaultOptions; env?: Record<string, string>; jobs?: JobSet; apiKey?: string } = {},
): Promise<Harness> {
  await clearOfMidnight(40_000, 5_000);
  const db = await createTestDatabase();
  // drop() ends the pool and then force-drops the database; a connection still closing then gets
  // 57P01, which an unobserved pool would throw as an uncaught error.
  db.pool.on('error', () => undefined);
  const emulator = await startEmulator({
    seed: 11,
    cellsPerDay: 25,
    lateDataDays: 0,
    faults: options.faults ?? {},
  });
  const prefix = testPrefix();
  const env: Record<string, string> = {
    ...pipelineEnv({
      baseUrl: emulator.url,
      apiKey: options.apiKey ?? 'demo-key',
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      prefix,
    }),
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_RATE_LIMIT: '500',
    ADOPS_HTTP_MAX_BACKOFF_MS: '50',
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  const config = loadConfig(env);
  const jobs = options.jobs ?? loadJobs('jobs');
  const queues = await openQueues(config);
  const workers: RunningWorker[] = [];
  return {
    db,
    emulator,
    prefix,
    env,
    config,
    jobs,
    queues,
    async worker(extra = {}) {
      const w = await inProcessWorker({
        config,
        jobs,
        pool: db.pool,
        logger: quietLogger,
        concurrency: 4,
        backoff: { baseMs: 50, maxMs: 400 },
        // Long enough that a loaded machine's late lock renewal is not mistaken for a dead worker.
        stall: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
        ...extra,
      });
      workers.push(w);
      return w;
    },
    async close() {
      await Promise.allSettled(workers.map((w) => w.close(2_000)));
      await queues.close();
      await emulator.close();
      await db.drop();
    },
  };
}

/** The last `days` days up to yesterday (UTC), as backfill --from/--to. */
/**
 * Waits while UTC midnight is less than `before` ms ahead or less than `after` ms behind: a test
 * reads "yesterday" once and the CLI reads it again later, and the two must name the same day.
 */
export async function clearOfMidnight(before: number, after: number, now = Date.now()): Promise<void> {
  const intoDay = now % 86_400_000;
  const wait =
    intoDay >= 86_400_000 - before ? 86_400_000 - intoDay + after : intoDay < after ? after - intoDay : 0;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

export function lastDays(days: number, now = new Date()): { from: string; to: string } {
  const today = localDate(now, 'UTC');
  return { from: addDays(today, -days), to: addDays(today, -1) };
}

/**
 * The warehouse's content, for comparing two runs: every report table and report_totals without
 * load ids, load times and where the totals came from (the API's for a request of one period, the
 * rows' for one of several: the same numbers), sorted. Equal snapshots mean equal data, row for row.
 */
export async function snapshot(pool: Pool, jobs: JobSet): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  const tables = [...jobs.reports.map((r) => `report_${r.name}`), 'report_totals'];
  for (const table of tables) {
    const { rows: cols } = await pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = $2 AND column_name NOT IN ('load_id', 'loaded_at', 'totals_source')
        ORDER BY ordinal_position`,
      [TEST_SCHEMA, table],
    );
    const list = cols.map((c) => `"${c.column_name}"::text`).join(', ');
    const { rows } = await pool.query<Record<string, unknown>>(
      `SELECT ${list} FROM "${TEST_SCHEMA}"."${table}" ORDER BY ${list}`,
    );
    out[table] = rows.map((r) => Object.values(r).join('|'));
  }
  return out;
}

/** Count of current loads (owning report_totals) that did not reconcile. */
export async function unreconciledCount(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_totals t
       JOIN "${TEST_SCHEMA}".report_loads l ON l.load_id = t.load_id
      WHERE l.reconciled IS NOT TRUE`,
  );
  return Number(rows[0]?.n);
}

/**
 * Deletes every key under `prefix` in one script, as a flush would: atomic, so no worker command
 * lands between a scan and its deletes (a SCAN could pass the active list before a worker made it
 * again, leaving one job behind). Resolves how many keys went.
 */
export async function flushPrefix(prefix: string, redisUrl = REDIS_URL): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const deleted = await redis.eval(
      "local keys = redis.call('KEYS', ARGV[1]) " +
        "for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end " +
        'return #keys',
      0,
      `${prefix}:*`,
    );
    return Number(deleted);
  } finally {
    redis.disconnect();
  }
}

/**
 * Loses every job of the harness' queues, as a Redis flush would: its keys on Redis, the rows of
 * BullMQ's tables (all but the schema's version) on Postgres. Resolves how many keys or jobs went.
 */
export async function loseQueue(h: Harness): Promise<number> {
  if (h.config.queue.backend === 'redis') return flushPrefix(h.prefix);
  const schema = `"${h.config.queue.schema}"`;
  const { rows } = await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.job`);
  const { rows: tables } = await h.db.pool.query<{ name: string }>(
    `SELECT quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_schema = $1 AND table_name NOT IN ('migration', 'meta')`,
    [h.config.queue.schema],
  );
  await h.db.pool.query(`TRUNCATE ${tables.map((t) => `${schema}.${t.name}`).join(', ')} CASCADE`);
  return rows[0]?.n ?? 0;
}

/**
 * Resolves once a pull is active. It counts active jobs rather than waiting for QueueEvents'
 * `active`: a QueueEvents starts reading at "now" only on its first read, which on the Postgres
 * queue can come after the job went active, and its `active` would then never arrive.
 */
export async function pullActive(harness: Harness, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await harness.queues.pulls.getActiveCount()) === 0) {
    if (Date.now() > deadline) throw new Error(`no pull became active within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// ---------------------------------------------------------------------------------------------------
// The reliability cases' pipeline: a Config from env-style settings, a logger captured line by line,
// the API client configured as the worker command wires it, and a real worker in this process.

/** A distinctive full-access key: every case uses one, and the secrets check searches for it. */
export function canaryKey(): string {
  return `sk-adops-CANARY-${randomBytes(12).toString('hex')}`;
}

/** The two reports the suite pulls, as defined in jobs/ (their tables exist in the test template). */
export function suiteReports(): { jobs: JobSet; reports: ReportJob[] } {
  const jobs = loadJobs(jobsDir());
  const pick = (name: string) => {
    const r = jobs.reports.find((j) => j.name === name);
    if (r === undefined) throw new Error(`jobs/ has no report ${name}`);
    return r;
  };
  const reports = [pick('daily_campaign'), pick('daily_zone')];
  return { jobs: { reports, entities: [] }, reports };
}

/** The env a case's pipeline runs with: fast retries, no shared-limit waits, metrics off. */
export function suiteEnv(o: {
  baseUrl: string;
  apiKey: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    ...pipelineEnv(o),
    ADOPS_JOBS_DIR: jobsDir(),
    LOG_LEVEL: 'debug',
    ADOPS_HTTP_ATTEMPTS: '3',
    ADOPS_HTTP_MAX_BACKOFF_MS: '100',
    ADOPS_HTTP_HEADERS_TIMEOUT_MS: '2000',
    ADOPS_HTTP_BODY_TIMEOUT_MS: '2000',
    ADOPS_PULL_ATTEMPTS: '10',
    ADOPS_RATE_LIMIT: '1000',
    ADOPS_SHUTDOWN_TIMEOUT_SECONDS: '5',
    ...o.extra,
  };
}

/** A logger at debug level whose every line (after the product's own redaction) is kept. */
export function capturedLogger(config: Config): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(l);
      done();
    },
  });
  const logger = createLogger({
    level: config.logLevel,
    secrets: config.apiKey === undefined ? [] : [config.apiKey],
    destination,
    pretty: false,
  });
  return { logger, lines };
}

/** The API client a worker of the suite fetches with: short backoffs, 429 handed to the queue. */
export function suiteClient(
  config: Config,
  logger: Logger,
  extra: Partial<ApiClientOptions> = {},
): ApiClient {
  return createApiClient({
    baseUrl: config.baseUrl ?? '',
    apiKey: config.apiKey ?? '',
    auth: config.auth,
    headersTimeoutMs: config.http.headersTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    attempts: config.http.attempts,
    baseBackoffMs: 10,
    maxBackoffMs: config.http.maxBackoffMs,
    on429: 'throw',
    logger,
    ...extra,
  });
}

/** The worker's view of an API client (as the worker command wires it): the abort signal passed on. */
export function asFetcher(client: ApiClient, streamFromBytes?: number): ReportFetcher {
  const stream = streamFromBytes === undefined ? {} : { streamFromBytes };
  return {
    fetchReport: (query, signal) =>
      client.fetchReport(query, signal === undefined ? stream : { signal, ...stream }),
    close: () => client.close(),
  };
}

export interface Pipeline {
  readonly config: Config;
  readonly logger: Logger;
  readonly lines: string[];
  readonly queues: Queues;
  readonly worker: RunningWorker;
  /** Closes the worker (with a deadline) and the queues. */
  close(): Promise<void>;
}

/** A worker in this process plus producer queues, both under config.queue.prefix. */
export async function startPipeline(o: {
  env: Record<string, string>;
  pool: Pool;
  jobs: JobSet;
  concurrency?: number;
  stall?: WorkerDeps['stall'];
  client?: Partial<ApiClientOptions>;
  /** Bodies from this size on are loaded as they stream in (the worker's ADOPS_STREAM_BODY_MB). */
  streamFromBytes?: number;
}): Promise<Pipeline> {
  const config = loadConfig(o.env);
  const { logger, lines } = capturedLogger(config);
  const client = suiteClient(config, logger, o.client);
  const queues = await openQueues(config);
  const worker = await inProcessWorker({
    config,
    jobs: o.jobs,
    pool: o.pool,
    logger,
    fetcher: asFetcher(client, o.streamFromBytes),
    concurrency: o.concurrency ?? 2,
    backoff: { baseMs: 20, maxMs: 200 },
    ...(o.stall === undefined ? {} : { stall: o.stall }),
  });
  return {
    config,
    logger,
    lines,
    queues,
    worker,
    close: async () => {
      await worker.close(5_000);
      await queues.close();
    },
  };
}
