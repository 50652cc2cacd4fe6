// Shared set-up of the queue's integration tests: a test database, a BullMQ prefix, the emulator,
// and the Config/env the CLI and in-process workers get. Everything is closed by `close()`.
import { Redis } from 'ioredis';
import type pg from 'pg';
import { loadConfig, type Config } from '../../../src/platform/config/env.js';
import { loadJobs, type JobSet } from '../../../src/platform/config/jobs.js';
import { startEmulator, type FaultOptions, type RunningEmulator } from '../../../src/emulator/index.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { openQueues, type Queues } from '../../../src/platform/queue/queues.js';
import { startWorker, type RunningWorker, type WorkerDeps } from '../../../src/worker/start.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { QUEUE_ENV } from '../../helpers/services.js';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';

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

export const quietLogger = createLogger({ level: 'silent', secrets: [] });

/** A harness over a fresh database, prefix and emulator. */
export async function createHarness(
  options: { faults?: FaultOptions; env?: Record<string, string>; jobs?: JobSet; apiKey?: string } = {},
): Promise<Harness> {
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
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: prefix,
    ADOPS_BASE_URL: emulator.url,
    ADOPS_API_KEY: options.apiKey ?? 'demo-key',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '500',
    ADOPS_HTTP_MAX_BACKOFF_MS: '50',
    LOG_LEVEL: 'warn',
    ...QUEUE_ENV,
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
      const w = await startWorker({
        config,
        jobs,
        pool: db.pool,
        logger: quietLogger,
        concurrency: 4,
        metrics: false,
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
export function lastDays(days: number, now = new Date()): { from: string; to: string } {
  const today = localDate(now, 'UTC');
  return { from: addDays(today, -days), to: addDays(today, -1) };
}

/**
 * The warehouse's content, for comparing two runs: every report table and report_totals without
 * load ids and load times, sorted. Equal snapshots mean equal data, row for row.
 */
export async function snapshot(pool: pg.Pool, jobs: JobSet): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  const tables = [...jobs.reports.map((r) => `report_${r.name}`), 'report_totals'];
  for (const table of tables) {
    const { rows: cols } = await pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = $2 AND column_name NOT IN ('load_id', 'loaded_at')
        ORDER BY ordinal_position`,
      [TEST_SCHEMA, table],
    );
    const list = cols.map((c) => `"${c.column_name}"::text`).join(', ');
    const { rows } = await pool.query(`SELECT ${list} FROM "${TEST_SCHEMA}"."${table}" ORDER BY ${list}`);
    out[table] = rows.map((r) => Object.values(r as Record<string, unknown>).join('|'));
  }
  return out;
}

/** Count of current loads (owning report_totals) that did not reconcile. */
export async function unreconciledCount(pool: pg.Pool): Promise<number> {
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
export async function flushPrefix(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
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
