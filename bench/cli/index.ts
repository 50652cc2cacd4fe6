// The CLI section: how soon `adops --help` and `adops status` answer, each against `node -e 0`
// started the same way in the same run, status on an empty warehouse and at 1M report_loads rows.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadJobs } from '../../src/platform/config/jobs.js';
import { packageRoot } from '../../src/platform/config/files.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';

const ROUNDS = 5;
/** report_loads rows of the big warehouse (the 1M). */
export const BIG_LOADS = 1_000_000;

/** One command's wall times (ms) over the rounds, and the best. */
export interface CliRun {
  readonly runsMs: number[];
  readonly bestMs: number;
}

export interface CliFigures {
  /** `node -e 0`: the floor of any Node command on this machine, timed beside the others. */
  readonly node: CliRun;
  readonly help: CliRun;
  readonly statusEmpty: CliRun;
  readonly statusBig: CliRun;
  readonly bigLoads: number;
}

/** Wall time of one process run to its end; throws when it fails. */
function timed(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`bench cli: node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function best(runsMs: number[]): CliRun {
  return { runsMs, bestMs: Math.min(...runsMs) };
}

/** Fills report_loads with `n` loaded periods spread over the job set's reports. */
async function fillLoads(url: string, reports: readonly string[], n: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO ${pg.escapeIdentifier(BENCH_SCHEMA)}.report_loads
         (report, period_start, period_end, dimensions, status, rows, reconciled, http_attempts, fetched_at)
       SELECT ($2::text[])[1 + i % cardinality($2::text[])], d, d, '{day}', 'loaded', 10, true, 1, now()
         FROM generate_series(1, $1::int) AS i,
              LATERAL (SELECT current_date - (i / cardinality($2::text[])) % 3650 AS d) AS p`,
      [n, reports],
    );
    await client.query(`ANALYZE ${pg.escapeIdentifier(BENCH_SCHEMA)}.report_loads`);
  } finally {
    await client.end();
  }
}

/** Times --help and status (empty, then at BIG_LOADS rows) against `node -e 0`, interleaved. */
export async function runCliSection(o: BenchOptions, say: (line: string) => void): Promise<CliFigures> {
  const bin = join(packageRoot(), 'bin', 'adops.js');
  const jobs = loadJobs(o.jobsDir);
  const db = await createBenchDatabase(o.adminUrl, 'cli', jobs.reports);
  const env: NodeJS.ProcessEnv = {
    PATH: o.path,
    DATABASE_URL: db.url,
    REDIS_URL: o.redisUrl,
    ADOPS_SCHEMA: BENCH_SCHEMA,
    ADOPS_JOBS_DIR: o.jobsDir,
    ADOPS_QUEUE_PREFIX: `adops-bench-cli-${process.pid}`,
    LOG_LEVEL: 'warn',
  };
  try {
    const node: number[] = [];
    const help: number[] = [];
    const statusEmpty: number[] = [];
    say('cli: --help and status on an empty warehouse...');
    for (let round = 0; round < ROUNDS; round++) {
      node.push(timed(['-e', '0'], env));
      help.push(timed([bin, '--help'], env));
      statusEmpty.push(timed([bin, 'status'], env));
    }
    say(`cli: status at ${BIG_LOADS.toLocaleString('en-US')} report_loads rows...`);
    await fillLoads(
      db.url,
      jobs.reports.map((r) => r.name),
      BIG_LOADS,
    );
    const statusBig: number[] = [];
    for (let round = 0; round < ROUNDS; round++) statusBig.push(timed([bin, 'status'], env));
    return {
      node: best(node),
      help: best(help),
      statusEmpty: best(statusEmpty),
      statusBig: best(statusBig),
      bigLoads: BIG_LOADS,
    };
  } finally {
    await db.drop();
  }
}
