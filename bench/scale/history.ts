// `npm run bench -- --scale`, history part: how `adops status`, `adops heal --dry-run` and a
// scheduler tick's gap query grow with report_loads (10k, 100k and 1M rows, seeded with
// generate_series), and a 100,000-period backfill enqueue: its wall time, Redis bytes per waiting
// pull and the enqueuing process's heap growth.
import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import Table from 'cli-table3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/platform/config/env.js';
import { loadJobs, type JobSet, type ReportJob } from '../../src/platform/config/jobs.js';
import { packageRoot } from '../../src/platform/config/files.js';
import { addDays, localDate } from '../../src/platform/dates/calendar.js';
import { collectStatus } from '../../src/status/status.js';
import { backfillPulls, tickWindows } from '../../src/plan/pulls.js';
import { enqueueStream, ENQUEUE_CHUNK, readHealPlan } from '../../src/schedule/enqueue.js';
import { openQueues } from '../../src/platform/queue/queues.js';
import { loadStates } from '../../src/pull/history.js';
import { ensurePartitions } from '../../src/schema/partitions.js';
import { monthsBetween } from '../../test/helpers/partitions.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import { warehouseOf } from '../../src/platform/pg/handle.js';

/** report_loads sizes measured, smallest first (the issue's 10k, 100k and 1M). */
export const HISTORY_SIZES = [10_000, 100_000, 1_000_000] as const;
/** Report definitions of the synthetic warehouse. */
const REPORTS = 20;
/** Loads per period: the first pull, re-pulls of the lookback and heals. */
const LOADS_PER_PERIOD = 8;
/** The window status and heal read (ADOPS_HEAL_DAYS' default). */
const WINDOW_DAYS = 30;
/** Pulls of the enqueue benchmark (the issue's 100,000): REPORTS x 5,000 days. */
export const ENQUEUE_PULLS = 100_000;
const ROUNDS = 3;

/** The best (ms) of each read at one size. */
export interface HistoryPoint {
  readonly loads: number;
  /** Days of history per report. */
  readonly days: number;
  /** collectStatus in process: every report's window, restatements, catalogue. */
  readonly statusMs: number;
  /** readHealPlan in process: what `adops heal --dry-run` reads. */
  readonly healMs: number;
  /** One report's states over the tick's watched days: the query of a scheduler tick. */
  readonly tickGapMs: number;
  /** `adops status` as a process, Node start included. */
  readonly statusCliMs: number;
  /** `adops heal --dry-run` as a process, Node start included. */
  readonly healCliMs: number;
}

export interface HistoryFigures {
  readonly reports: number;
  readonly loadsPerPeriod: number;
  readonly windowDays: number;
  readonly points: readonly HistoryPoint[];
}

export interface EnqueueFigures {
  readonly pulls: number;
  readonly reports: number;
  readonly chunk: number;
  /** Counting, planning and adding every pull, to the last chunk in Redis. */
  readonly wallMs: number;
  readonly pullsPerSecond: number;
  /** MEMORY USAGE of every key under the prefix, over the waiting pulls. */
  readonly bytesPerPull: number;
  /** INFO used_memory before and after, over the pulls (other clients of the server add noise). */
  readonly usedMemoryPerPull: number;
  /** Peak growth of this process's live heap while enqueuing, MiB: flat when nothing is held. */
  readonly heapPeakMiB: number;
}

const name = (i: number) => `scale_r${String(i).padStart(2, '0')}`;

/** The synthetic report definitions, as YAML files in `dir` (for the CLI) and as loaded jobs. */
async function writeJobs(dir: string): Promise<JobSet> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < REPORTS; i++)
    await writeFile(
      join(dir, `${name(i)}.yaml`),
      `name: ${name(i)}\ndimensions: [day]\nperiod: day\nlookback_days: 3\n` +
        `schedule: { cron: '0 3 * * *', timezone: 'UTC' }\n`,
    );
  return loadJobs(dir);
}

/**
 * Replaces report_loads, report_totals and the report tables with `loads` rows: every report, a
 * day per period over `days` days up to yesterday, LOADS_PER_PERIOD attempts each (the last one
 * failed for about 1 period in 97, 1 period in 101 never attempted), then one report_totals row
 * and one report row per loaded period.
 */
async function seed(url: string, reports: readonly ReportJob[], days: number): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const s = pg.escapeIdentifier(BENCH_SCHEMA);
  try {
    await c.query(`TRUNCATE ${s}.report_totals, ${s}.report_raw, ${s}.report_loads`);
    for (const r of reports) await c.query(`TRUNCATE ${s}.${pg.escapeIdentifier(`report_${r.name}`)}`);
    await c.query(
      `INSERT INTO ${s}.report_loads (report, period_start, period_end, dimensions, status, rows, reconciled,
                                      restatement, http_attempts, fetched_at, recorded_at, error, fetch_token)
       SELECT r.name, d, d, '{day}', CASE WHEN failed THEN 'failed' ELSE 'loaded' END,
              CASE WHEN failed THEN NULL ELSE 100 END, true,
              CASE WHEN k > 1 AND NOT failed THEN
                '{"ad_requests": {"previous": 100, "delta": 1}, "filled_impressions": {"previous": 100, "delta": 0},
                  "impressions": {"previous": 100, "delta": 1}, "measurable_impressions": {"previous": 100, "delta": 0},
                  "viewable_impressions": {"previous": 100, "delta": 0}}'::jsonb END,
              1, d + k, d + k, CASE WHEN failed THEN 'HTTP 503' END, 0
         FROM unnest($1::text[]) WITH ORDINALITY AS r(name, n),
              generate_series(current_date - $2::int, current_date - 1, interval '1 day') AS g(t),
              LATERAL (SELECT g.t::date AS d) AS dd,
              generate_series(1, $3::int) AS k,
              LATERAL (SELECT k = $3 AND (r.n * 7919 + (current_date - d)) % 97 = 0 AS failed) AS f
        WHERE (r.n * 31 + (current_date - d)) % 101 <> 0
        ORDER BY d, k, r.n`,
      [reports.map((r) => r.name), days, LOADS_PER_PERIOD],
    );
    await c.query(
      `INSERT INTO ${s}.report_totals (report, period_start, period_end, ad_requests, filled_impressions,
                                       impressions, measurable_impressions, viewable_impressions, load_id, loaded_at)
       SELECT DISTINCT ON (report, period_start, period_end) report, period_start, period_end,
              100, 90, 80, 70, 60, load_id, recorded_at
         FROM ${s}.report_loads WHERE status = 'loaded'
        ORDER BY report, period_start, period_end, load_id DESC`,
    );
    // The report tables are partitioned by month: the seeded months need their partitions first.
    const today = localDate(new Date(), 'UTC');
    const months = monthsBetween(addDays(today, -days - 1), today);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    for (const r of reports)
      await ensurePartitions(c, warehouseOf(pool, BENCH_SCHEMA), `report_${r.name}`, months);
    await pool.end();
    for (const r of reports)
      await c.query(
        `INSERT INTO ${s}.${pg.escapeIdentifier(`report_${r.name}`)}
           (period_start, period_end, day, ad_requests, filled_impressions, impressions,
            measurable_impressions, viewable_impressions, load_id)
         SELECT period_start, period_end, period_start, 100, 90, 80, 70, 60, load_id
           FROM ${s}.report_totals WHERE report = $1`,
        [r.name],
      );
    await c.query(`ANALYZE ${s}.report_loads`);
    await c.query(`ANALYZE ${s}.report_totals`);
    const { rows } = await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${s}.report_loads`);
    return Number(rows[0]?.n);
  } finally {
    await c.end();
  }
}

async function bestOf(fn: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

function bestProcess(args: readonly string[], env: NodeJS.ProcessEnv): number {
  let best = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const ms = performance.now() - t;
    if (r.status !== 0)
      throw new Error(`bench scale: adops ${args.slice(1).join(' ')} exited ${r.status}: ${r.stderr}`);
    best = Math.min(best, ms);
  }
  return best;
}

/** Seeds each size in turn and times status, heal --dry-run and the tick's gap query on it. */
export async function runHistoryScale(o: BenchOptions, say: (line: string) => void): Promise<HistoryFigures> {
  const jobsDir = resolve(join(o.cacheDir, 'scale-jobs'));
  const jobs = await writeJobs(jobsDir);
  const reports = jobs.reports;
  const db = await createBenchDatabase(o.adminUrl, 'scale', reports);
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const prefix = `adops-bench-scale-${process.pid}`;
  const env: NodeJS.ProcessEnv = {
    PATH: o.path,
    DATABASE_URL: db.url,
    REDIS_URL: o.redisUrl,
    ADOPS_SCHEMA: BENCH_SCHEMA,
    ADOPS_JOBS_DIR: jobsDir,
    ADOPS_QUEUE_PREFIX: prefix,
    ADOPS_HEAL_DAYS: String(WINDOW_DAYS),
    LOG_LEVEL: 'warn',
  };
  const bin = join(packageRoot(), 'bin', 'adops.js');
  const points: HistoryPoint[] = [];
  try {
    for (const size of HISTORY_SIZES) {
      const days = Math.round(size / (REPORTS * LOADS_PER_PERIOD));
      say(
        `scale: seeding ${size.toLocaleString('en-US')} report_loads rows (${days} days x ${REPORTS} reports)...`,
      );
      const loads = await seed(db.url, reports, days);
      const now = new Date();
      const first = reports[0];
      if (first === undefined) throw new Error('bench scale: no reports');
      const watched = tickWindows(first, now, now, WINDOW_DAYS).watched;
      const from = watched[0]?.start ?? addDays(localDate(now, 'UTC'), -WINDOW_DAYS);
      const to = watched.at(-1)?.end ?? addDays(localDate(now, 'UTC'), -1);
      const point: HistoryPoint = {
        loads,
        days,
        statusMs: await bestOf(() =>
          collectStatus(warehouseOf(pool, BENCH_SCHEMA), jobs, undefined, WINDOW_DAYS, now),
        ),
        healMs: await bestOf(() => readHealPlan(warehouseOf(pool, BENCH_SCHEMA), reports, WINDOW_DAYS, now)),
        tickGapMs: await bestOf(() => loadStates(warehouseOf(pool, BENCH_SCHEMA), first, from, to)),
        statusCliMs: bestProcess([bin, 'status'], env),
        healCliMs: bestProcess([bin, 'heal', '--dry-run'], env),
      };
      say(
        `  status ${ms(point.statusMs)} (process ${ms(point.statusCliMs)}), heal --dry-run ${ms(point.healMs)} ` +
          `(process ${ms(point.healCliMs)}), tick gap query ${ms(point.tickGapMs)}`,
      );
      points.push(point);
    }
  } finally {
    await pool.end();
    await db.drop();
    await rm(jobsDir, { recursive: true, force: true });
    // `adops status` opened the queues under the prefix: their meta keys.
    const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
    await deleteKeys(redis, `${prefix}:*`).finally(() => redis.disconnect());
  }
  return { reports: REPORTS, loadsPerPeriod: LOADS_PER_PERIOD, windowDays: WINDOW_DAYS, points };
}

/** Bytes Redis holds under `prefix`, by MEMORY USAGE of every key (lists and streams counted whole). */
async function bytesUnder(redis: Redis, prefix: string): Promise<number> {
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    const pipe = redis.pipeline();
    for (const k of keys) pipe.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
    for (const [error, n] of (await pipe.exec()) ?? []) {
      if (error !== null) throw error;
      bytes += Number(n);
    }
  } while (cursor !== '0');
  return bytes;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? Number.NaN);
}

/** Enqueues a 100,000-period backfill (20 reports x 5,000 days) as `adops backfill` does, then removes it. */
export async function runEnqueueScale(o: BenchOptions, say: (line: string) => void): Promise<EnqueueFigures> {
  const days = ENQUEUE_PULLS / REPORTS;
  const reports = Array.from({ length: REPORTS }, (_, i) =>
    Object.freeze({ name: name(i), period: 'day' }),
  ) as unknown as ReportJob[];
  const to = addDays(localDate(new Date(), 'UTC'), -1);
  const from = addDays(to, 1 - days);
  const prefix = `adops-bench-enqueue-${process.pid}`;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  const forget = onInterrupt(() => deleteKeys(redis, `${prefix}:*`));
  const queues = await openQueues(
    loadConfig({
      REDIS_URL: o.redisUrl,
      ADOPS_QUEUE_PREFIX: prefix,
      ADOPS_BASE_URL: 'http://127.0.0.1:1/v2',
      ADOPS_API_KEY: 'bench',
    }),
  );
  try {
    say(`scale: enqueueing ${ENQUEUE_PULLS.toLocaleString('en-US')} pulls in chunks of ${ENQUEUE_CHUNK}...`);
    globalThis.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    const memoryBefore = await usedMemory(redis);
    const t = performance.now();
    let total = 0;
    for (const _ of backfillPulls(reports, from, to, 'oldest-first')) total++;
    let chunks = 0;
    const result = await enqueueStream(queues.pulls, backfillPulls(reports, from, to), {
      // The live heap every 10 chunks (after a collection, when the bench runs with --expose-gc):
      // what the enqueue holds, not the garbage it has not collected yet.
      onChunk: () => {
        if (++chunks % 10 !== 0) return;
        globalThis.gc?.();
        heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
      },
    });
    const wallMs = performance.now() - t;
    if (total !== ENQUEUE_PULLS || result.added !== ENQUEUE_PULLS)
      throw new Error(`bench scale: planned ${total}, enqueued ${result.added} of ${ENQUEUE_PULLS} pulls`);
    const waiting = await queues.pulls.getWaitingCount();
    const figures: EnqueueFigures = {
      pulls: waiting,
      reports: REPORTS,
      chunk: ENQUEUE_CHUNK,
      wallMs,
      pullsPerSecond: waiting / (wallMs / 1000),
      bytesPerPull: (await bytesUnder(redis, prefix)) / waiting,
      usedMemoryPerPull: ((await usedMemory(redis)) - memoryBefore) / waiting,
      heapPeakMiB: (heapPeak - heapBefore) / 2 ** 20,
    };
    say(
      `  ${ms(wallMs)}, ${Math.round(figures.pullsPerSecond)} pulls/s, ${Math.round(figures.bytesPerPull)} B of Redis per waiting pull`,
    );
    return figures;
  } finally {
    await queues.close();
    await deleteKeys(redis, `${prefix}:*`);
    forget();
    redis.disconnect();
  }
}

function ms(v: number): string {
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 1 : 0)} ms`;
}

/** The history and enqueue figures as two tables. */
export function renderHistoryScale(h: HistoryFigures | undefined, e: EnqueueFigures | undefined): string {
  const parts: string[] = [];
  const plain = { style: { head: [], border: [] } };
  if (h !== undefined) {
    const t = new Table({
      head: [
        'report_loads',
        'days',
        'status',
        'adops status',
        'heal read',
        'adops heal --dry-run',
        'tick gap query',
      ],
      ...plain,
    });
    for (const p of h.points)
      t.push([
        p.loads.toLocaleString('en-US'),
        p.days,
        ms(p.statusMs),
        ms(p.statusCliMs),
        ms(p.healMs),
        ms(p.healCliMs),
        ms(p.tickGapMs),
      ]);
    parts.push(
      `history: ${h.reports} reports, ${h.loadsPerPeriod} loads per period, a ${h.windowDays}-day window; ` +
        `best of ${ROUNDS}; "adops ..." columns are whole processes, Node start included\n${t.toString()}`,
    );
  }
  if (e !== undefined) {
    const t = new Table({
      head: ['pulls', 'wall', 'pulls/s', 'Redis B/pull', 'used_memory B/pull', 'heap peak'],
      ...plain,
    });
    t.push([
      e.pulls.toLocaleString('en-US'),
      ms(e.wallMs),
      Math.round(e.pullsPerSecond),
      Math.round(e.bytesPerPull),
      Math.round(e.usedMemoryPerPull),
      `${e.heapPeakMiB.toFixed(1)} MiB`,
    ]);
    parts.push(`enqueue: ${e.reports} reports, chunks of ${e.chunk}\n${t.toString()}`);
  }
  return parts.join('\n\n');
}
