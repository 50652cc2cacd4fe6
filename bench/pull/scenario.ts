// One pull-bench scenario: real `adops worker` processes on one queue backend, an emulator in
// this process (so its CPU is not the workers'), a fresh database and queue of its own, all removed
// after; every row of every pull is checked to have loaded.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/platform/config/env.js';
import { loadJobs } from '../../src/platform/config/jobs.js';
import { addDays } from '../../src/platform/dates/calendar.js';
import { startEmulator } from '../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../src/schedule/enqueue.js';
import { openQueues, type PullQueue } from '../../src/platform/queue/queues.js';
import { busyShare, machineTicks, processCpuSeconds } from '../backfill/cpu.js';
import { startWorkers } from '../backfill/workers.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase, migrateBenchQueues } from '../database.js';
import type { BenchOptions } from '../options.js';
import type { QueueBackendKind, Round } from './figures.js';

/** Rows of every pull's report: the "100-row report". */
export const PULL_ROWS = 100;
const WARMUP_PULLS = 100;
/** Early enough that every day of the longest scenario (the CPU measure's warm-up) is in the past. */
const FIRST_DAY = '2000-01-01';
/**
 * REDIS_URL of the Postgres scenarios: a port nothing listens on, so a Redis connection the
 * Postgres queue should never need would fail the run instead of quietly using the shared Redis.
 */
export const NO_REDIS_URL = 'redis://127.0.0.1:1';

export interface Scenario {
  readonly backend: QueueBackendKind;
  readonly workers: number;
  readonly rate: number;
  readonly latencyMs: number;
  readonly pulls: number;
  readonly rounds: number;
  /** Untimed pulls before the first round (default WARMUP_PULLS). */
  readonly warmup?: number;
  /** Days (periods) one report request covers (ADOPS_DAYS_PER_REQUEST); default 1: a request per pull. */
  readonly daysPerRequest?: number;
}

/**
 * `s.warmup` (WARMUP_PULLS) untimed pulls, then `s.rounds` rounds of `s.pulls` timed ones (one report, one day
 * each): per round the wall time from the enqueue to the last finishedOn, and the CPU seconds the
 * worker processes spent meanwhile.
 */
export async function scenario(
  o: BenchOptions,
  jobsDir: string,
  s: Scenario,
  nodeArgs: readonly string[] = [],
): Promise<Round[]> {
  const reports = loadJobs(jobsDir).reports;
  const emulator = await startEmulator({
    seed: o.seed,
    cellsPerDay: PULL_ROWS,
    lateDataDays: 0,
    faults: { latencyMs: s.latencyMs, paths: ['/v2/reports'], seed: o.seed },
  });
  const prefix = `adops-bench-${randomBytes(6).toString('hex')}`;
  // On Postgres the queue lives in the bench database and goes with it: no Redis keys to remove.
  const redis = s.backend === 'redis' ? new Redis(o.redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
  const forgetKeys =
    redis === undefined ? () => undefined : onInterrupt(() => deleteKeys(redis, `${prefix}*`));
  let db: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  try {
    db = await createBenchDatabase(o.adminUrl, 'pull', reports);
    const env: Record<string, string> = {
      PATH: o.path,
      ADOPS_BASE_URL: emulator.url,
      ADOPS_API_KEY: 'demo-key',
      DATABASE_URL: db.url,
      ADOPS_QUEUE: s.backend,
      REDIS_URL: s.backend === 'redis' ? o.redisUrl : NO_REDIS_URL,
      ADOPS_SCHEMA: BENCH_SCHEMA,
      ADOPS_JOBS_DIR: jobsDir,
      ADOPS_QUEUE_PREFIX: prefix,
      ADOPS_RATE_LIMIT: String(s.rate),
      ADOPS_DAYS_PER_REQUEST: String(s.daysPerRequest ?? 1),
      ADOPS_METRICS_PORT: '0',
      LOG_LEVEL: o.logLevel,
    };
    const config = loadConfig(env);
    await migrateBenchQueues(db.url, config);
    const queues = await openQueues(config);
    // The Redis server's process, on this machine (the bench's Redis is local), for its CPU.
    const redisPid =
      redis === undefined ? 0 : Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? 0);
    try {
      workers = await startWorkers(
        s.workers,
        o.concurrency,
        env,
        s.backend === 'redis'
          ? () => queues.pulls.getWorkersCount()
          : (logged) => Promise.resolve(logged.get('worker started') ?? 0),
        nodeArgs,
      );
      const warmupPulls = s.warmup ?? WARMUP_PULLS;
      const warmFrom = addDays(FIRST_DAY, s.pulls * s.rounds);
      const { accounts } = config;
      const warmup = await enqueueBackfill(
        queues.pulls,
        reports,
        warmFrom,
        addDays(warmFrom, warmupPulls - 1),
        'newest-first',
        accounts,
      );
      await waitForPulls(queues.pulls, warmup.pulls);
      const rounds: Round[] = [];
      for (let round = 0; round < s.rounds; round++) {
        // Let the last second end, so the timed run starts with the whole of a window.
        await new Promise((r) => setTimeout(r, 1_000));
        emulator.resetStats();
        const failedBefore = (await queues.pulls.getJobCounts('failed')).failed ?? 0;
        const cpuBefore = workers.pids.reduce((a, pid) => a + processCpuSeconds(pid), 0);
        const machineBefore = machineTicks();
        const postgresBefore = await sessionsCpu(db);
        const redisBefore = processCpuSeconds(redisPid);
        const started = Date.now();
        const from = addDays(FIRST_DAY, round * s.pulls);
        const to = addDays(from, s.pulls - 1);
        const timed = await enqueueBackfill(queues.pulls, reports, from, to, 'newest-first', accounts);
        const failed = await waitUntilIdle(queues.pulls, failedBefore);
        const workerCpuSeconds = workers.pids.reduce((a, pid) => a + processCpuSeconds(pid), 0) - cpuBefore;
        const machineBusy = busyShare(machineBefore, machineTicks());
        const redisCpuSeconds = redis === undefined ? 0 : processCpuSeconds(redisPid) - redisBefore;
        let postgresCpuSeconds = 0;
        // A session that began during the round counts from 0; one that ended is lost (pools keep theirs).
        for (const [pid, seconds] of await sessionsCpu(db))
          postgresCpuSeconds += seconds - (postgresBefore.get(pid) ?? 0);
        let lastFinish = 0;
        for (const pull of timed.pulls)
          lastFinish = Math.max(lastFinish, (await queues.pulls.getJob(pull.jobId))?.finishedOn ?? 0);
        rounds.push({
          wallMs: (lastFinish > 0 ? lastFinish : Date.now()) - started,
          workerCpuSeconds,
          requests: emulator.stats().requests['GET /v2/reports'] ?? 0,
          failed,
          machineBusy,
          postgresCpuSeconds,
          redisCpuSeconds,
        });
      }
      const expected = (s.pulls * s.rounds + warmupPulls) * PULL_ROWS;
      const rows = await loadedRows(db.url);
      if (rows !== expected)
        throw new Error(
          `bench pull (${s.backend}): ${rows} rows loaded, expected ${expected} (${rounds.reduce((a, r) => a + r.failed, 0)} pulls failed)`,
        );
      return rounds;
    } finally {
      await queues.close();
    }
  } finally {
    await workers?.stop();
    await emulator.close();
    if (redis !== undefined) await deleteKeys(redis, `${prefix}*`).finally(() => redis.disconnect());
    forgetKeys();
    await db?.drop();
  }
}

/** How often a timed round counts the jobs still to run. */
const POLL_MS = 100;

/**
 * Resolves once no pull waits, runs or is delayed (a retry), with the pulls failed since
 * `failedBefore`. A round counts jobs in one call whatever their number, where `waitForPulls`
 * (`backfill --wait`) reads up to 500 jobs' states a round, a Postgres query each on the Postgres
 * queue: that would be charged to the queue as its own cost, and take CPU from the workers.
 */
export async function waitUntilIdle(queue: PullQueue, failedBefore: number): Promise<number> {
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    if (Object.values(counts).every((n) => n === 0))
      return ((await queue.getJobCounts('failed')).failed ?? 0) - failedBefore;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** CPU seconds so far of each Postgres session on the bench database, by pid (the caller's excluded). */
export async function sessionsCpu(db: {
  readonly url: string;
  readonly name: string;
}): Promise<Map<number, number>> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db.name],
    );
    return new Map(rows.map((r) => [r.pid, processCpuSeconds(r.pid)]));
  } finally {
    await c.end();
  }
}

async function loadedRows(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: string | null }>(
      `SELECT sum(rows)::text AS n FROM ${BENCH_SCHEMA}.report_loads WHERE status = 'loaded'`,
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}
