// `npm run bench -- --only requests` (issue 37): many days in one request, measured side by side in one
// run against a baseline of one period per request. A backfill of the five default reports at 10
// requests/s: requests made and wall time against the one-request-per-period bound, its rows compared
// with the baseline's; the same against a server that takes at most 3 days (the splits the workers
// log); and the CPU of a loaded 100-row period, worker and whole system, on both queues.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import Table from 'cli-table3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startEmulator } from '../../src/emulator/index.js';
import { loadConfig } from '../../src/platform/config/env.js';
import { loadJobs, type ReportJob } from '../../src/platform/config/jobs.js';
import { addDays } from '../../src/platform/dates/calendar.js';
import { openQueues } from '../../src/platform/queue/queues.js';
import { enqueueBackfill } from '../../src/schedule/enqueue.js';
import { startWorkers } from '../backfill/workers.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import { QUEUE_BACKENDS, type QueueBackendKind } from '../pull/figures.js';
import { JOB_YAML } from '../pull/index.js';
import { PULL_ROWS, scenario, waitUntilIdle } from '../pull/scenario.js';

/** A goal's verdict, as results.ts' Verdict reads it. */
type Verdict = { name: string; target: string; measured: number; met: boolean; unit?: 'ms' };

/** The issue's backfill: requests/s shared by the workers, the server's cap of the third run. */
export const REQUEST_RATE = 10;
const MAX_DAYS = 3;
/** Small reports, so the rate limit is what binds; the answer costs the server time per row. */
const CELLS_PER_DAY = 100;
const MS_PER_1000_ROWS = 20;
const FIRST_DAY = '2025-01-01';
/** The CPU measure: periods per round (100 requests of 7), rounds (the least CPU counts: 3, as the pull
 * section's; this machine's rounds of the same worker differ by up to a quarter), untimed periods before. */
const CPU_PERIODS = 700;
const CPU_ROUNDS = 3;
const CPU_WARMUP = 1_400;

export const REQUEST_TARGETS = { requests: 1 / 6, wallOverBound: 1 / 5, workerMs: 1, totalMs: 4 } as const;

/** One backfill run: its requests (refused ones too), wall time, and a digest of what it loaded. */
export interface BackfillRun {
  readonly daysPerRequest: number;
  readonly requests: number;
  readonly wallMs: number;
  readonly failed: number;
  readonly loadedPeriods: number;
  readonly digest: string;
  /** Splits the workers logged, by the days of the request split. */
  readonly splits: Readonly<Record<string, number>>;
}

/** CPU ms per loaded period: the worker, the database's Postgres sessions, Redis, and all three. */
export interface PeriodCpu {
  readonly workerMs: number;
  readonly postgresMs: number;
  readonly redisMs: number;
  readonly totalMs: number;
}

export interface RequestsFigures {
  readonly reports: number;
  readonly days: number;
  readonly periods: number;
  readonly ratePerSecond: number;
  /** One request per period: periods / rate. */
  readonly boundMs: number;
  readonly baseline: BackfillRun;
  readonly grouped: BackfillRun;
  /** days_per_request 7 against a server refusing more than MAX_DAYS days. */
  readonly capped: BackfillRun;
  readonly requestsOverBaseline: number;
  readonly wallOverBound: number;
  readonly cappedWallOverBound: number;
  readonly exact: { readonly grouped: boolean; readonly capped: boolean };
  /** Per queue: one period per request, and seven. */
  readonly cpu: Readonly<Record<QueueBackendKind, { readonly one: PeriodCpu; readonly seven: PeriodCpu }>>;
}

/** Runs the three measures, each on its own emulator, database and queue, all removed after. */
export async function runRequestsSection(
  o: BenchOptions,
  say: (line: string) => void,
): Promise<RequestsFigures> {
  const reports = loadJobs(o.jobsDir).reports;
  const periods = reports.length * o.days;
  const boundMs = (periods / REQUEST_RATE) * 1000;
  const run = async (daysPerRequest: number, maxDays = 0) => {
    say(
      `requests: ${o.days} days x ${reports.length} reports at ${REQUEST_RATE} requests/s, days_per_request ` +
        `${daysPerRequest}${maxDays > 0 ? `, a server taking at most ${maxDays} days` : ''}...`,
    );
    const r = await backfillRun(o, reports, daysPerRequest, maxDays);
    say(
      `  ${r.requests} requests, wall ${(r.wallMs / 1000).toFixed(1)} s (bound ${(boundMs / 1000).toFixed(0)} s)`,
    );
    return r;
  };
  const baseline = await run(1);
  const grouped = await run(7);
  const capped = await run(7, MAX_DAYS);
  const jobsDir = resolve(join(o.cacheDir, `requests-jobs-${process.pid}`));
  await mkdir(jobsDir, { recursive: true });
  await writeFile(join(jobsDir, 'pull_bench.yaml'), JOB_YAML);
  const cpu = {} as Record<QueueBackendKind, { one: PeriodCpu; seven: PeriodCpu }>;
  try {
    for (const backend of QUEUE_BACKENDS) {
      const measure = async (daysPerRequest: number) => {
        say(
          `requests: CPU per ${PULL_ROWS}-row period, ${backend} queue, days_per_request ${daysPerRequest}...`,
        );
        const rounds = await scenario(o, jobsDir, {
          ...{ backend, workers: 1, rate: 100_000, latencyMs: 0, daysPerRequest },
          ...{ pulls: CPU_PERIODS, rounds: CPU_ROUNDS, warmup: CPU_WARMUP },
        });
        const per = (seconds: number) => (seconds * 1000) / CPU_PERIODS;
        const best = rounds.reduce((a, b) => (b.workerCpuSeconds < a.workerCpuSeconds ? b : a));
        const c = {
          workerMs: per(best.workerCpuSeconds),
          postgresMs: per(best.postgresCpuSeconds),
          redisMs: per(best.redisCpuSeconds),
          totalMs: per(best.workerCpuSeconds + best.postgresCpuSeconds + best.redisCpuSeconds),
        };
        say(`  worker ${c.workerMs.toFixed(2)} ms, whole system ${c.totalMs.toFixed(2)} ms per period`);
        return c;
      };
      cpu[backend] = { one: await measure(1), seven: await measure(7) };
    }
  } finally {
    await rm(jobsDir, { recursive: true, force: true });
  }
  return {
    reports: reports.length,
    days: o.days,
    periods,
    ratePerSecond: REQUEST_RATE,
    boundMs,
    baseline,
    grouped,
    capped,
    requestsOverBaseline: grouped.requests / baseline.requests,
    wallOverBound: grouped.wallMs / boundMs,
    cappedWallOverBound: capped.wallMs / boundMs,
    exact: { grouped: grouped.digest === baseline.digest, capped: capped.digest === baseline.digest },
    cpu,
  };
}

/** A backfill of `reports` over the bench's days through real `adops worker` processes on Redis. */
async function backfillRun(
  o: BenchOptions,
  reports: readonly ReportJob[],
  daysPerRequest: number,
  maxDaysPerRequest: number,
): Promise<BackfillRun> {
  const emulator = await startEmulator({
    seed: o.seed,
    cellsPerDay: CELLS_PER_DAY,
    lateDataDays: 0,
    faults: { latencyMs: o.latencyMs, paths: ['/v2/reports'], seed: o.seed },
    quirks: { maxDaysPerRequest, msPer1000Rows: MS_PER_1000_ROWS },
  });
  const prefix = `adops-bench-requests-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  const forgetKeys = onInterrupt(() => deleteKeys(redis, `${prefix}*`));
  let db: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  try {
    db = await createBenchDatabase(o.adminUrl, 'requests', reports);
    const env: Record<string, string> = {
      ...{ PATH: o.path, ADOPS_BASE_URL: emulator.url, ADOPS_API_KEY: 'demo-key', DATABASE_URL: db.url },
      ...{ REDIS_URL: o.redisUrl, ADOPS_SCHEMA: BENCH_SCHEMA, ADOPS_JOBS_DIR: o.jobsDir },
      ...{ ADOPS_QUEUE_PREFIX: prefix, ADOPS_RATE_LIMIT: String(REQUEST_RATE), ADOPS_METRICS_PORT: '0' },
      ...{ ADOPS_DAYS_PER_REQUEST: String(daysPerRequest), LOG_LEVEL: o.logLevel },
    };
    const config = loadConfig(env);
    const queues = await openQueues(config);
    try {
      workers = await startWorkers(o.workers, o.concurrency, env, () => queues.pulls.getWorkersCount());
      // Let the rate limit's current second end, so the run starts with a whole window.
      await new Promise((r) => setTimeout(r, 1_000));
      emulator.resetStats();
      const started = Date.now();
      const to = addDays(FIRST_DAY, o.days - 1);
      const { pulls } = await enqueueBackfill(
        queues.pulls,
        reports,
        FIRST_DAY,
        to,
        'newest-first',
        config.accounts,
      );
      const failed = await waitUntilIdle(queues.pulls, 0);
      let lastFinish = 0;
      for (const p of pulls)
        lastFinish = Math.max(lastFinish, (await queues.pulls.getJob(p.jobId))?.finishedOn ?? 0);
      const splits: Record<string, number> = {};
      for (const [msg, n] of workers.messages) {
        const days = /^request of (\d+) days split/.exec(msg)?.[1];
        if (days !== undefined) splits[days] = (splits[days] ?? 0) + n;
      }
      return {
        daysPerRequest,
        requests: emulator.stats().requests['GET /v2/reports'] ?? 0,
        wallMs: (lastFinish > 0 ? lastFinish : Date.now()) - started,
        failed,
        ...(await contents(db.url, reports)),
        splits,
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

/** The periods loaded, and one digest of every report table and report_totals (counters, not sources). */
async function contents(url: string, reports: readonly ReportJob[]) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const s = pg.escapeIdentifier(BENCH_SCHEMA);
    const digests: string[] = [];
    for (const table of [...reports.map((r) => `report_${r.name}`), 'report_totals']) {
      const { rows: cols } = await c.query<{ name: string }>(
        `SELECT quote_ident(column_name) AS name FROM information_schema.columns WHERE table_schema = $1
            AND table_name = $2 AND column_name NOT IN ('load_id', 'loaded_at', 'totals_source') ORDER BY ordinal_position`,
        [BENCH_SCHEMA, table],
      );
      const list = cols.map((col) => col.name).join(', ');
      const { rows } = await c.query<{ md5: string | null }>(
        `SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS md5 FROM (SELECT ${list} FROM ${s}.${pg.escapeIdentifier(table)}) t`,
      );
      digests.push(rows[0]?.md5 ?? '');
    }
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${s}.report_loads WHERE status = 'loaded'`,
    );
    return { loadedPeriods: rows[0]?.n ?? 0, digest: digests.join('/') };
  } finally {
    await c.end();
  }
}

/** The issue's goals against this run's figures. */
export function requestsTargets(f: RequestsFigures): Verdict[] {
  const out: Verdict[] = [
    {
      name: `requests of a ${f.days}-day backfill of ${f.reports} reports / one per period`,
      target: '<= 0.17x (1/6)',
      measured: f.requestsOverBaseline,
      met: f.requestsOverBaseline <= REQUEST_TARGETS.requests,
    },
    {
      name: `its wall / the one-request-per-period bound (${(f.boundMs / 1000).toFixed(0)} s), rows exact`,
      target: '<= 0.20x (1/5)',
      measured: f.wallOverBound,
      met: f.wallOverBound <= REQUEST_TARGETS.wallOverBound && f.exact.grouped,
    },
  ];
  for (const backend of QUEUE_BACKENDS) {
    const { seven } = f.cpu[backend];
    const name = (what: string) => `${what} CPU per ${PULL_ROWS}-row period, 7 per request, ${backend} queue`;
    out.push(
      { ...ms(name('worker'), REQUEST_TARGETS.workerMs, seven.workerMs) },
      { ...ms(name('whole-system'), REQUEST_TARGETS.totalMs, seven.totalMs) },
    );
  }
  return out;
}

const ms = (name: string, limit: number, measured: number): Verdict => ({
  ...{ name, target: `<= ${limit} ms`, measured, met: measured <= limit, unit: 'ms' },
});

/** The figures as tables (BENCHMARKS.md quotes them). */
export function renderRequests(f: RequestsFigures): string {
  const secs = (v: number) => `${(v / 1000).toFixed(1)} s`;
  const runs = new Table({
    head: [
      'backfill',
      'requests',
      'vs baseline',
      'wall',
      'wall / bound',
      'periods',
      'rows',
      'splits (days: n)',
    ],
    style: { head: [], border: [] },
  });
  const row = (label: string, r: BackfillRun, exact: string) =>
    runs.push([
      label,
      r.requests,
      `${(r.requests / f.baseline.requests).toFixed(3)}x`,
      secs(r.wallMs),
      `${(r.wallMs / f.boundMs).toFixed(2)}x`,
      `${r.loadedPeriods} (${r.failed} failed)`,
      exact,
      Object.entries(r.splits)
        .map(([d, n]) => `${d}: ${n}`)
        .join(', ') || '-',
    ]);
  row('baseline: days_per_request 1', f.baseline, 'the reference');
  row('days_per_request 7', f.grouped, f.exact.grouped ? 'exact' : 'DIFFER');
  row(`7, server takes <= ${MAX_DAYS} days`, f.capped, f.exact.capped ? 'exact' : 'DIFFER');
  const cpu = new Table({
    head: ['CPU per loaded 100-row period', 'worker', 'Postgres', 'Redis', 'whole system'],
    style: { head: [], border: [] },
  });
  for (const backend of QUEUE_BACKENDS)
    for (const [label, c] of [
      ['1 per request', f.cpu[backend].one],
      ['7 per request', f.cpu[backend].seven],
    ] as const)
      cpu.push([
        `${backend} queue, ${label}`,
        ...[c.workerMs, c.postgresMs, c.redisMs, c.totalMs].map((v) => `${v.toFixed(2)} ms`),
      ]);
  return (
    `requests: ${f.days} days x ${f.reports} reports = ${f.periods} periods at ${f.ratePerSecond} requests/s; ` +
    `bound of one request per period ${secs(f.boundMs)}\n${runs.toString()}\n${cpu.toString()}`
  );
}
