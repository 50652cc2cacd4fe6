// The pull section: what one small pull costs a worker, how close a backfill comes to the shared
// rate limit's bound, and how many pulls a second the queue carries with no limit at all, on both
// queue backends (Redis and Postgres) side by side in one run.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BenchOptions } from '../options.js';
import { summarizeProfiles } from '../profile.js';
import {
  backendFigures,
  boundFigures,
  capacityFigures,
  type BackendPullFigures,
  type BoundFigures,
  type QueueBackendKind,
  type Round,
} from './figures.js';
import { PULL_ROWS, scenario } from './scenario.js';

export { PULL_ROWS } from './scenario.js';
/** Timed pulls of each round of the CPU measure (after the scenario's untimed warm-up). */
export const CPU_PULLS = 400;
/**
 * Untimed pulls before the CPU measure. A worker runs for months; its first few thousand pulls
 * also pay for V8 compiling the pull's code and for the allocator growing its heaps, which a
 * measure of 100 warm-up pulls charged to every pull (issue 25: 4.4 ms after 100, 2 ms after 3,000).
 */
export const CPU_WARMUP_PULLS = 3_000;
/** Rounds of the CPU measure, one after another on the same worker: the least CPU counts. */
export const CPU_ROUNDS = 3;
/** The rate-bound backfill: pulls, and the shared limit (ADOPS_RATE_LIMIT). */
export const BOUND_PULLS = 1_000;
export const BOUND_RATE = 50;
/** Pulls of the capacity run: no rate limit, no latency, `--workers` x `--concurrency`. */
export const CAPACITY_PULLS = 1_000;
/** API requests per second of the CPU and capacity runs: ADOPS_RATE_LIMIT's most, never binding. */
const UNBOUND_RATE = 100_000;
/** Log levels at which a worker still logs `worker started`, the Postgres scenarios' readiness. */
const READY_LEVELS = ['trace', 'debug', 'info'];
/** The one report of the section: six dimensions, so `cellsPerDay` cells are exactly its rows. */
export const JOB_YAML = `name: pull_bench
dimensions: [day, campaign_id, creative_id, zone_id, country, device]
period: day
lookback_days: 0
schedule: { cron: '0 3 * * *', timezone: 'UTC' }
`;

const NAMES: Record<QueueBackendKind, string> = { redis: 'Redis', postgres: 'Postgres' };

export interface PullFigures {
  readonly rowsPerPull: number;
  /** Worker CPU ms per pull: user + system of the one worker process over CPU_PULLS pulls, best round (Redis queue). */
  readonly cpuMsPerPull: number;
  /** Every round's figure (a busy machine only ever adds CPU: context switches, cache misses). */
  readonly cpuMsPerPullRuns: readonly number[];
  readonly cpuPulls: number;
  readonly cpuWallMs: number;
  /** The Redis queue's wall time of BOUND_PULLS pulls at BOUND_RATE requests/s over the bound (= backends.redis). */
  readonly backfillOverRateBound: number;
  /** The Redis queue's rate-bound backfill (= backends.redis.bound). */
  readonly bound: BoundFigures;
  /** The rate-bound backfill and the capacity run on each queue backend (ADOPS_QUEUE). */
  readonly backends: Readonly<Record<QueueBackendKind, BackendPullFigures>>;
}

/** `run` on Redis, then on Postgres (one after the other: they share the machine's two CPUs). */
async function perBackend<T>(
  run: (backend: QueueBackendKind) => Promise<T>,
): Promise<Record<QueueBackendKind, T>> {
  const redis = await run('redis');
  return { redis, postgres: await run('postgres') };
}

/** Runs the measures, each on its own emulator, database and queue, all removed after. */
export async function runPullSection(o: BenchOptions, say: (line: string) => void): Promise<PullFigures> {
  if (!READY_LEVELS.includes(o.logLevel))
    throw new Error(
      `bench pull: --log-level ${o.logLevel} hides the 'worker started' line the Postgres scenarios wait on; use info or lower`,
    );
  const jobsDir = resolve(join(o.cacheDir, `pull-jobs-${process.pid}`));
  await mkdir(jobsDir, { recursive: true });
  await writeFile(join(jobsDir, 'pull_bench.yaml'), JOB_YAML);
  try {
    say(
      `pull: worker CPU per ${PULL_ROWS}-row pull (Redis queue, 1 worker x ${o.concurrency}, no latency)...`,
    );
    const profileDir = o.profile ? resolve(join(o.cacheDir, 'profiles-pull')) : undefined;
    const cpu = await scenario(
      o,
      jobsDir,
      {
        backend: 'redis',
        workers: 1,
        rate: UNBOUND_RATE,
        latencyMs: 0,
        pulls: CPU_PULLS,
        rounds: CPU_ROUNDS,
        warmup: CPU_WARMUP_PULLS,
      },
      profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir],
    );
    if (profileDir !== undefined) say(await summarizeProfiles(profileDir, 30));
    const cpuMsPerPullRuns = cpu.map((r) => (r.workerCpuSeconds * 1000) / CPU_PULLS);
    say(`  ${cpuMsPerPullRuns.map((ms) => ms.toFixed(2)).join(', ')} ms CPU per pull`);
    const one = async (backend: QueueBackendKind, rate: number, latencyMs: number, pulls: number) => {
      const s = { backend, workers: o.workers, rate, latencyMs, pulls, rounds: 1 };
      const [round] = (await scenario(o, jobsDir, s)) as [Round];
      return { round, shape: { pulls, workers: o.workers, concurrency: o.concurrency, latencyMs } };
    };
    // Each scenario on one backend, then the other, so both meet the machine in the same minutes.
    const bound = await perBackend(async (backend) => {
      say(
        `pull (${NAMES[backend]} queue): ${BOUND_PULLS} pulls at ${BOUND_RATE} requests/s, ${o.workers} workers x ${o.concurrency}, latency ${o.latencyMs} ms...`,
      );
      const { round, shape } = await one(backend, BOUND_RATE, o.latencyMs, BOUND_PULLS);
      const b = boundFigures(shape, BOUND_RATE, round);
      say(`  wall ${(b.wallMs / 1000).toFixed(2)} s against the bound ${(b.boundMs / 1000).toFixed(0)} s`);
      return b;
    });
    const capacity = await perBackend(async (backend) => {
      say(
        `pull (${NAMES[backend]} queue): capacity, ${CAPACITY_PULLS} pulls with no rate limit or latency, ${o.workers} workers x ${o.concurrency}...`,
      );
      const { round, shape } = await one(backend, UNBOUND_RATE, 0, CAPACITY_PULLS);
      const c = capacityFigures(shape, round);
      say(`  ${c.pullsPerSecond.toFixed(0)} pulls/s (${(c.wallMs / 1000).toFixed(2)} s)`);
      return c;
    });
    const backends = {
      redis: backendFigures(bound.redis, capacity.redis),
      postgres: backendFigures(bound.postgres, capacity.postgres),
    };
    return {
      rowsPerPull: PULL_ROWS,
      cpuMsPerPull: Math.min(...cpuMsPerPullRuns),
      cpuMsPerPullRuns,
      cpuPulls: CPU_PULLS,
      cpuWallMs: Math.min(...cpu.map((r) => r.wallMs)),
      backfillOverRateBound: backends.redis.backfillOverRateBound,
      bound: backends.redis.bound,
      backends,
    };
  } finally {
    await rm(jobsDir, { recursive: true, force: true });
  }
}
