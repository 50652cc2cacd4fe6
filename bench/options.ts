// The benchmark's settings from flags and environment: pure, so a bad flag fails before any setup.
import { parseArgs } from 'node:util';

/** Rows of the BI scale year, by default (the 50M); `--scale-rows` makes it smaller. */
const BI_SCALE_ROWS = 50_000_000;
/** Days of the accounts backfill (--scale-days) and requests/s of each account (--scale-rate), by default. */
const ACCOUNT_DAYS = 365;
const ACCOUNT_RATE = 50;

export const SECTIONS = [
  'load',
  'emulator',
  'parser',
  'sync',
  'backfill',
  'cli',
  'pull',
  'memory',
  'requests',
] as const;
export type Section = (typeof SECTIONS)[number];

/** Everything one bench run needs to know. */
export interface BenchOptions {
  /** Rows of the one-day load-path report (N). */
  readonly rows: number;
  /** Days of the backfill. */
  readonly days: number;
  /** Rows the naive row-by-row INSERT loader really inserts; its figure for N is extrapolated. */
  readonly naiveSample: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly latencyMs: number;
  /** Fraction of report requests answered 500 in the faulty backfill run. */
  readonly failRate: number;
  /** ADOPS_RATE_LIMIT of the sync section's worker. */
  readonly syncRateLimit: number;
  readonly sections: ReadonlySet<Section>;
  /** `--scale`: the scale benchmarks (bench/scale/), alone unless --only names sections too. */
  readonly scale: boolean;
  /** Admin connection: the bench creates its own databases here and drops them. */
  readonly adminUrl: string;
  readonly redisUrl: string;
  readonly jobsDir: string;
  readonly resultsFile: string;
  /** Folder for the saved response body, CSV and CPU profiles (git-ignored). */
  readonly cacheDir: string;
  /** Run the load child under --cpu-prof and print where its time goes. */
  readonly profile: boolean;
  /** --big: the memory section goes on to 300 MB and 1 GB bodies (minutes; not in CI). */
  readonly big: boolean;
  readonly seed: number;
  /** LOG_LEVEL of the worker processes (default info, as deployed). */
  readonly logLevel: string;
  /** PATH handed to the worker processes (they inherit nothing else). */
  readonly path: string;
  /** Rows of the scale BI query's table (default 50M). */
  readonly scaleRows: number;
  /** Days of the scale accounts backfill (default 365). */
  readonly scaleDays: number;
  /** Requests/s of each account in the scale accounts backfill (default 50). */
  readonly scaleRate: number;
}

/** Thrown for a flag or variable the bench cannot use; the message says what is allowed. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

export const USAGE = `npm run bench -- [options]
  --rows N            rows of the load-path report (env BENCH_ROWS, default 1000000)
  --days D            backfill days (env BENCH_DAYS, default 90)
  --naive-sample S    rows the naive INSERT loader inserts before extrapolating (default 20000)
  --workers W         backfill worker processes (default 2)
  --concurrency C     pulls at once per worker (default 8)
  --latency MS        emulator latency in the backfill (default 50)
  --fail-rate R       share of injected 500s in the faulty backfill run (default 0.1)
  --only LIST         sections to run: load,emulator,parser,sync,backfill,cli,pull,memory,requests
                      (default all; requests: several days per request against one per period)
  --big               memory section: also 300 MB and 1 GB bodies (minutes)
  --sync-rate N       requests/s of the sync section's worker (ADOPS_RATE_LIMIT, default 25)
  --profile           CPU-profile our load path and print the top functions
  --results FILE      where to write the results (default bench/results.json)
  --log-level L       LOG_LEVEL of the backfill workers (default info, as deployed)
  --quick             N=100000, 10 days
  --scale             the scale pieces only (with --only, those sections too): status, heal and
                      the tick's gap query at 10k to 1M loads, a 100,000-pull enqueue, and the
                      BI query on 50M rows, partitioned against unpartitioned, and a backfill
                      of 3 accounts x 20 reports x 365 days against its rate-limit bound
  --scale-rows N      rows of the scale BI query (default 50000000)
  --scale-days N      days of the scale accounts backfill, 3 accounts x 20 reports (default 365)
  --scale-rate R      requests/s of each account in the scale accounts backfill (default 50)
Environment: BENCH_PG_ADMIN_URL (default postgres://root@127.0.0.1:5432/postgres), REDIS_URL.`;

/** Reads flags (they win) and BENCH_* variables into BenchOptions; throws BenchUsageError. */
export function parseBenchOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): BenchOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        rows: { type: 'string' },
        days: { type: 'string' },
        'naive-sample': { type: 'string' },
        workers: { type: 'string' },
        concurrency: { type: 'string' },
        latency: { type: 'string' },
        'fail-rate': { type: 'string' },
        'sync-rate': { type: 'string' },
        only: { type: 'string' },
        profile: { type: 'boolean' },
        big: { type: 'boolean' },
        results: { type: 'string' },
        quick: { type: 'boolean' },
        seed: { type: 'string' },
        'log-level': { type: 'string' },
        scale: { type: 'boolean' },
        'scale-rows': { type: 'string' },
        'scale-days': { type: 'string' },
        'scale-rate': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BenchUsageError(`${reason}\n${USAGE}`, { cause: error });
  }
  if (values.help === true) throw new BenchUsageError(USAGE);
  const quick = values.quick === true;
  const text = (flag: string, variable?: string) =>
    (values[flag] as string | undefined) ?? (variable === undefined ? undefined : env[variable] || undefined);
  const only = text('only', 'BENCH_ONLY');
  const scale = values.scale === true;
  const sections = new Set<Section>();
  // --scale alone runs only the scale pieces: the other sections are an hour of their own.
  for (const s of (only ?? (scale ? '' : SECTIONS.join(',')))
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '')) {
    if (!(SECTIONS as readonly string[]).includes(s))
      throw new BenchUsageError(`--only: "${s}" is not a section; allowed: ${SECTIONS.join(', ')}`);
    sections.add(s as Section);
  }
  return {
    rows: whole(text('rows', 'BENCH_ROWS'), quick ? 100_000 : 1_000_000, 1, 20_000_000, '--rows'),
    days: whole(text('days', 'BENCH_DAYS'), quick ? 10 : 90, 1, 366, '--days'),
    naiveSample: whole(text('naive-sample'), quick ? 5_000 : 20_000, 100, 10_000_000, '--naive-sample'),
    workers: whole(text('workers'), 2, 1, 64, '--workers'),
    concurrency: whole(text('concurrency'), 8, 1, 1_000, '--concurrency'),
    latencyMs: whole(text('latency'), 50, 0, 60_000, '--latency'),
    failRate: fraction(text('fail-rate'), 0.1, '--fail-rate'),
    syncRateLimit: whole(text('sync-rate'), 25, 1, 100_000, '--sync-rate'),
    sections,
    scale,
    adminUrl: env.BENCH_PG_ADMIN_URL || 'postgres://root@127.0.0.1:5432/postgres',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    jobsDir: env.ADOPS_JOBS_DIR || './jobs',
    resultsFile: text('results') ?? 'bench/results.json',
    cacheDir: 'bench/.cache',
    profile: values.profile === true,
    big: values.big === true,
    seed: whole(text('seed'), 1, 0, 2 ** 31 - 1, '--seed'),
    logLevel: logLevel(text('log-level')),
    path: env.PATH || '/usr/local/bin:/usr/bin:/bin',
    scaleRows: whole(text('scale-rows'), BI_SCALE_ROWS, 1_000, 1_000_000_000, '--scale-rows'),
    scaleDays: whole(text('scale-days'), ACCOUNT_DAYS, 1, 366, '--scale-days'),
    scaleRate: whole(text('scale-rate'), ACCOUNT_RATE, 1, 100_000, '--scale-rate'),
  };
}

function whole(raw: string | undefined, fallback: number, min: number, max: number, name: string): number {
  if (raw === undefined) return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < min || n > max)
    throw new BenchUsageError(`${name}=${raw} is not allowed: expected a whole number from ${min} to ${max}`);
  return n;
}

function fraction(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n >= 1)
    throw new BenchUsageError(`${name}=${raw} is not allowed: expected a number from 0 to below 1`);
  return n;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(raw: string | undefined): string {
  if (raw === undefined) return 'info';
  if (!LOG_LEVELS.includes(raw))
    throw new BenchUsageError(`--log-level=${raw} is not allowed; allowed: ${LOG_LEVELS.join(', ')}`);
  return raw;
}
