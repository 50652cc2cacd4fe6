// Section 3: a backfill of `days` days x the default reports through the real queue, with real
// `adops worker` processes against the emulator at a fixed latency, clean and with injected 500s.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/platform/config/env.js';
import { loadJobs } from '../../src/platform/config/jobs.js';
import { addDays } from '../../src/platform/dates/calendar.js';
import { startEmulator } from '../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../src/schedule/enqueue.js';
import { openQueues } from '../../src/platform/queue/queues.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import { busyShare, machineTicks, processCpuSeconds, TICKS_PER_SECOND } from './cpu.js';
import { startWorkers } from './workers.js';

/** First day of every backfill: in the past, so every day is final in the emulator. */
export const BACKFILL_FROM = '2025-01-01';

/**
 * The untimed warm-up before each scenario: days before BACKFILL_FROM, enough pulls to keep every
 * slot busy at least once, so each worker has compiled its hot code and opened a Postgres
 * connection per slot, as long-running workers have when a backfill arrives.
 */
export const WARMUP_FROM = '2024-12-01';
export const WARMUP_DAYS = 8;

/**
 * API requests per second the bench allows (ADOPS_RATE_LIMIT). The default, 10/s, would make the
 * shared limit the only thing measured; the bench measures what the queue and loader cost.
 */
export const BENCH_RATE_LIMIT = 100_000;

export interface BackfillFigures {
  readonly failRate: number;
  readonly pulls: number;
  readonly completed: number;
  readonly failed: number;
  /** HTTP requests the emulator served for /v2/reports, retries included. */
  readonly requests: number;
  /** Of those, answered with an injected 500. */
  readonly injected500s: number;
  /** From the first enqueue to the last job's finishedOn. */
  readonly wallMs: number;
  /** requests x latency / (workers x concurrency). */
  readonly idealMs: number;
  readonly pullsPerSecond: number;
  readonly rowsLoaded: number;
  /** Per pull job, from BullMQ's processedOn to finishedOn (its last attempt): the whole pull. */
  readonly meanPullMs: number;
  readonly p95PullMs: number;
  /**
   * Per loaded pull, from report_loads: HTTP time (latency and retries included) and load time (up
   * to the load's last statement, which for a small period also writes its rows).
   */
  readonly meanFetchMs: number;
  readonly meanLoadMs: number;
  readonly p95FetchMs: number;
  readonly p95LoadMs: number;
  /** Share of the machine's CPUs busy during the scenario, 0..1. */
  readonly cpuBusy: number;
  /** CPU seconds of the worker processes, and of the harness process (which runs the emulator). */
  readonly workersCpuSeconds: number;
  readonly harnessCpuSeconds: number;
  /** CPU seconds of the Postgres backends serving the bench database (the workers' pools). */
  readonly postgresCpuSeconds: number;
  /** CPU seconds of redis-server during the scenario (shared: other clients count too). */
  readonly redisCpuSeconds: number;
  /** CPU seconds the whole machine was busy during the scenario (all CPUs). */
  readonly machineBusyCpuSeconds: number;
}

type LoadTimes = Pick<
  BackfillFigures,
  'rowsLoaded' | 'meanFetchMs' | 'meanLoadMs' | 'p95FetchMs' | 'p95LoadMs'
>;

/** The ideal wall time: every request's latency spread perfectly over every concurrent slot. */
export function idealMs(requests: number, latencyMs: number, slots: number): number {
  return (requests * latencyMs) / slots;
}

/** Runs one backfill scenario on its own emulator, database and BullMQ prefix, all removed after. */
export async function runBackfill(
  o: BenchOptions,
  failRate: number,
  say: (line: string) => void,
  profileDir?: string,
): Promise<BackfillFigures> {
  const reports = loadJobs(o.jobsDir).reports;
  const to = addDays(BACKFILL_FROM, o.days - 1);
  const emulator = await startEmulator({
    seed: o.seed,
    lateDataDays: 0,
    faults: { latencyMs: o.latencyMs, failRate, paths: ['/v2/reports'], seed: o.seed },
  });
  const prefix = `adops-bench-${randomBytes(6).toString('hex')}`;
  let db: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  let forgetKeys: () => void = () => undefined;
  try {
    db = await createBenchDatabase(o.adminUrl, 'backfill', reports);
    forgetKeys = onInterrupt(() => deleteKeys(redis, `${prefix}*`));
    const env: Record<string, string> = {
      PATH: o.path,
      ADOPS_BASE_URL: emulator.url,
      ADOPS_API_KEY: 'demo-key',
      DATABASE_URL: db.url,
      REDIS_URL: o.redisUrl,
      ADOPS_SCHEMA: BENCH_SCHEMA,
      ADOPS_JOBS_DIR: o.jobsDir,
      ADOPS_QUEUE_PREFIX: prefix,
      ADOPS_RATE_LIMIT: String(BENCH_RATE_LIMIT),
      ADOPS_METRICS_PORT: '0',
      LOG_LEVEL: o.logLevel,
    };
    const queues = await openQueues(loadConfig(env));
    try {
      workers = await startWorkers(
        o.workers,
        o.concurrency,
        env,
        () => queues.pulls.getWorkersCount(),
        profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir],
      );
      say(`  warming the workers up with ${WARMUP_DAYS} other days (untimed)...`);
      const warmup = await enqueueBackfill(
        queues.pulls,
        reports,
        WARMUP_FROM,
        addDays(WARMUP_FROM, WARMUP_DAYS - 1),
      );
      await waitForPulls(queues.pulls, warmup.pulls);
      emulator.resetStats();
      say(
        `  ${reports.length} reports x ${o.days} days, ${o.workers} workers x ${o.concurrency}, latency ${o.latencyMs} ms, ${Math.round(failRate * 100)}% 500s...`,
      );
      const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? 0);
      const redisBefore = processCpuSeconds(redisPid);
      const cpuBefore = machineTicks();
      const workersBefore = workers.pids.reduce((a, pid) => a + processCpuSeconds(pid), 0);
      const harnessBefore = process.cpuUsage();
      const started = Date.now();
      const backfill = await enqueueBackfill(queues.pulls, reports, BACKFILL_FROM, to);
      // The CLI's own wait (backfill --wait), polling at its default pace; the wall time is read from
      // the jobs' finishedOn, so the poll interval does not round it.
      const result = await waitForPulls(queues.pulls, backfill.pulls);
      const cpuAfter = machineTicks();
      const redisCpuSeconds = processCpuSeconds(redisPid) - redisBefore;
      const workersCpuSeconds =
        workers.pids.reduce((a, pid) => a + processCpuSeconds(pid), 0) - workersBefore;
      const harness = process.cpuUsage(harnessBefore);
      let lastFinish = 0;
      const pullMs: number[] = [];
      for (const pull of backfill.pulls) {
        const job = await queues.pulls.getJob(pull.jobId);
        lastFinish = Math.max(lastFinish, job?.finishedOn ?? 0);
        if (job?.processedOn !== undefined && job.finishedOn !== undefined)
          pullMs.push(job.finishedOn - job.processedOn);
      }
      const stats = emulator.stats();
      const requests = stats.requests['GET /v2/reports'] ?? 0;
      const wallMs = (lastFinish > 0 ? lastFinish : Date.now()) - started;
      const loads = await loadFigures(db.url);
      const postgresCpuSeconds = (await backendPids(db.url, db.name)).reduce(
        (a, pid) => a + processCpuSeconds(pid),
        0,
      );
      if (result.failed.length > 0)
        say(`  ${result.failed.length} pulls failed, first: ${result.failed[0]?.reason ?? '?'}`);
      return {
        failRate,
        pulls: backfill.pulls.length,
        completed: result.completed.length,
        failed: result.failed.length,
        requests,
        injected500s: stats.faults.fail ?? 0,
        wallMs,
        idealMs: idealMs(requests, o.latencyMs, o.workers * o.concurrency),
        pullsPerSecond: backfill.pulls.length / (wallMs / 1000),
        ...loads,
        meanPullMs: mean(pullMs),
        p95PullMs: percentile(pullMs, 0.95),
        cpuBusy: busyShare(cpuBefore, cpuAfter),
        machineBusyCpuSeconds: (cpuAfter.busy - cpuBefore.busy) / TICKS_PER_SECOND,
        redisCpuSeconds,
        workersCpuSeconds,
        harnessCpuSeconds: (harness.user + harness.system) / 1e6,
        postgresCpuSeconds,
      };
    } finally {
      await queues.close();
    }
  } finally {
    await workers?.stop();
    await emulator.close();
    await deleteKeys(redis, `${prefix}*`).finally(() => redis.disconnect());
    forgetKeys();
    await db?.drop();
  }
}

/** Rows written by loaded pulls, and their fetch and load times (mean and 95th percentile). */
async function loadFigures(url: string): Promise<LoadTimes> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<Record<'n' | 'fetch' | 'load' | 'fetch95' | 'load95', string | null>>(
      `SELECT sum(rows)::text AS n, avg(fetch_ms)::text AS fetch, avg(load_ms)::text AS load,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY fetch_ms)::text AS fetch95,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY load_ms)::text AS load95
         FROM ${BENCH_SCHEMA}.report_loads WHERE status = 'loaded' AND period_start >= $1`,
      [BACKFILL_FROM],
    );
    const r = rows[0];
    const num = (v: string | null | undefined) => Number(v ?? 0);
    return {
      rowsLoaded: num(r?.n),
      meanFetchMs: num(r?.fetch),
      meanLoadMs: num(r?.load),
      p95FetchMs: num(r?.fetch95),
      p95LoadMs: num(r?.load95),
    };
  } finally {
    await c.end();
  }
}

/** Server process ids of the other sessions on database `name` (the workers' pooled connections). */
async function backendPids(url: string, name: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    return rows.map((r) => r.pid);
  } finally {
    await c.end();
  }
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The nearest-rank percentile `q` (0..1) of `values`; 0 for none. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}
