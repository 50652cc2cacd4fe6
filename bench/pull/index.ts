// The pull section: what one small pull costs a worker, and how close a backfill comes to the
// shared rate limit's bound. Real `adops worker` processes, the real queue, the emulator in this
// process (so its CPU is not the workers').
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/config/env.js';
import { loadJobs } from '../../src/config/jobs.js';
import { addDays } from '../../src/dates/calendar.js';
import { startEmulator } from '../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../src/queue/enqueue.js';
import { openQueues } from '../../src/queue/queues.js';
import { processCpuSeconds } from '../backfill/cpu.js';
import { startWorkers } from '../backfill/workers.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import { summarizeProfiles } from '../profile.js';

/** Rows of every pull's report: the "100-row report". */
export const PULL_ROWS = 100;
/** Timed pulls of each round of the CPU measure (after WARMUP_PULLS untimed ones). */
export const CPU_PULLS = 400;
/** Rounds of the CPU measure, one after another on the same worker: the least CPU counts. */
export const CPU_ROUNDS = 3;
const WARMUP_PULLS = 100;
/** The rate-bound backfill: pulls, and the shared limit (ADOPS_RATE_LIMIT). */
export const BOUND_PULLS = 1_000;
export const BOUND_RATE = 50;
/** API requests per second of the CPU measure: high enough never to bind. */
const UNBOUND_RATE = 100_000;
const FIRST_DAY = '2020-01-01';
/** The one report of the section: six dimensions, so `cellsPerDay` cells are exactly its rows. */
export const JOB_YAML = `name: pull_bench
dimensions: [day, campaign_id, creative_id, zone_id, country, device]
period: day
lookback_days: 0
schedule: { cron: '0 3 * * *', timezone: 'UTC' }
`;

export interface PullFigures {
  readonly rowsPerPull: number;
  /** Worker CPU ms per pull: user + system of the one worker process over CPU_PULLS pulls, best round. */
  readonly cpuMsPerPull: number;
  /** Every round's figure (a busy machine only ever adds CPU: context switches, cache misses). */
  readonly cpuMsPerPullRuns: readonly number[];
  readonly cpuPulls: number;
  readonly cpuWallMs: number;
  /** Wall time of BOUND_PULLS pulls at BOUND_RATE requests/s over the bound pulls / rate. */
  readonly backfillOverRateBound: number;
  readonly bound: {
    readonly pulls: number;
    readonly ratePerSecond: number;
    readonly workers: number;
    readonly concurrency: number;
    readonly latencyMs: number;
    readonly requests: number;
    readonly wallMs: number;
    readonly boundMs: number;
    readonly failed: number;
  };
}

/** Runs the two measures, each on its own emulator, database and BullMQ prefix, all removed after. */
export async function runPullSection(o: BenchOptions, say: (line: string) => void): Promise<PullFigures> {
  const jobsDir = resolve(join(o.cacheDir, `pull-jobs-${process.pid}`));
  await mkdir(jobsDir, { recursive: true });
  await writeFile(join(jobsDir, 'pull_bench.yaml'), JOB_YAML);
  try {
    say(`pull: worker CPU per ${PULL_ROWS}-row pull (1 worker x ${o.concurrency}, no latency)...`);
    const profileDir = o.profile ? resolve(join(o.cacheDir, 'profiles-pull')) : undefined;
    const cpu = await scenario(
      o,
      jobsDir,
      { workers: 1, rate: UNBOUND_RATE, latencyMs: 0, pulls: CPU_PULLS, rounds: CPU_ROUNDS },
      profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir],
    );
    if (profileDir !== undefined) say(await summarizeProfiles(profileDir, 30));
    const cpuMsPerPullRuns = cpu.map((r) => (r.workerCpuSeconds * 1000) / CPU_PULLS);
    const cpuMsPerPull = Math.min(...cpuMsPerPullRuns);
    say(`  ${cpuMsPerPullRuns.map((ms) => ms.toFixed(2)).join(', ')} ms CPU per pull`);
    say(
      `pull: ${BOUND_PULLS} pulls at ${BOUND_RATE} requests/s, ${o.workers} workers x ${o.concurrency}, latency ${o.latencyMs} ms...`,
    );
    const [bound] = (await scenario(o, jobsDir, {
      workers: o.workers,
      rate: BOUND_RATE,
      latencyMs: o.latencyMs,
      pulls: BOUND_PULLS,
      rounds: 1,
    })) as [Round];
    const boundMs = (BOUND_PULLS / BOUND_RATE) * 1000;
    say(`  wall ${(bound.wallMs / 1000).toFixed(2)} s against the bound ${(boundMs / 1000).toFixed(0)} s`);
    return {
      rowsPerPull: PULL_ROWS,
      cpuMsPerPull,
      cpuMsPerPullRuns,
      cpuPulls: CPU_PULLS,
      cpuWallMs: Math.min(...cpu.map((r) => r.wallMs)),
      backfillOverRateBound: bound.wallMs / boundMs,
      bound: {
        pulls: BOUND_PULLS,
        ratePerSecond: BOUND_RATE,
        workers: o.workers,
        concurrency: o.concurrency,
        latencyMs: o.latencyMs,
        requests: bound.requests,
        wallMs: bound.wallMs,
        boundMs,
        failed: bound.failed,
      },
    };
  } finally {
    await rm(jobsDir, { recursive: true, force: true });
  }
}

export interface Scenario {
  readonly workers: number;
  readonly rate: number;
  readonly latencyMs: number;
  readonly pulls: number;
  readonly rounds: number;
}

export interface Round {
  readonly wallMs: number;
  readonly workerCpuSeconds: number;
  readonly requests: number;
  readonly failed: number;
}

/**
 * WARMUP_PULLS untimed pulls, then `s.rounds` rounds of `s.pulls` timed ones (one report, one day
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
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  const forgetKeys = onInterrupt(() => deleteKeys(redis, `${prefix}*`));
  let db: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  try {
    db = await createBenchDatabase(o.adminUrl, 'pull', reports);
    const env: Record<string, string> = {
      PATH: o.path,
      ADOPS_BASE_URL: emulator.url,
      ADOPS_API_KEY: 'demo-key',
      DATABASE_URL: db.url,
      REDIS_URL: o.redisUrl,
      ADOPS_SCHEMA: BENCH_SCHEMA,
      ADOPS_JOBS_DIR: jobsDir,
      ADOPS_QUEUE_PREFIX: prefix,
      ADOPS_RATE_LIMIT: String(s.rate),
      ADOPS_METRICS_PORT: '0',
      LOG_LEVEL: o.logLevel,
    };
    const queues = await openQueues(loadConfig(env));
    try {
      workers = await startWorkers(
        s.workers,
        o.concurrency,
        env,
        () => queues.pulls.getWorkersCount(),
        nodeArgs,
      );
      const warmFrom = addDays(FIRST_DAY, s.pulls * s.rounds);
      const warmup = await enqueueBackfill(
        queues.pulls,
        reports,
        warmFrom,
        addDays(warmFrom, WARMUP_PULLS - 1),
      );
      await waitForPulls(queues.pulls, warmup.pulls);
      const rounds: Round[] = [];
      for (let round = 0; round < s.rounds; round++) {
        // Let the last second end, so the timed run starts with the whole of a window.
        await new Promise((r) => setTimeout(r, 1_000));
        emulator.resetStats();
        const cpuBefore = workers.pids.reduce((a, pid) => a + processCpuSeconds(pid), 0);
        const started = Date.now();
        const from = addDays(FIRST_DAY, round * s.pulls);
        const timed = await enqueueBackfill(queues.pulls, reports, from, addDays(from, s.pulls - 1));
        const result = await waitForPulls(queues.pulls, timed.pulls, { pollMs: 100 });
        const workerCpuSeconds = workers.pids.reduce((a, pid) => a + processCpuSeconds(pid), 0) - cpuBefore;
        let lastFinish = 0;
        for (const pull of timed.pulls)
          lastFinish = Math.max(lastFinish, (await queues.pulls.getJob(pull.jobId))?.finishedOn ?? 0);
        rounds.push({
          wallMs: (lastFinish > 0 ? lastFinish : Date.now()) - started,
          workerCpuSeconds,
          requests: emulator.stats().requests['GET /v2/reports'] ?? 0,
          failed: result.failed.length,
        });
      }
      const expected = (s.pulls * s.rounds + WARMUP_PULLS) * PULL_ROWS;
      const rows = await loadedRows(db.url);
      if (rows !== expected)
        throw new Error(
          `bench pull: ${rows} rows loaded, expected ${expected} (${rounds.reduce((a, r) => a + r.failed, 0)} pulls failed)`,
        );
      return rounds;
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
