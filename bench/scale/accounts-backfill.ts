// `npm run bench -- --scale`, accounts part: a backfill of 3 accounts x 20 reports x 365 days
// through the real queue, 2 real `adops worker` processes with ADOPS_ACCOUNTS_FILE, each account
// its own emulator and rate limit. The accounts run side by side, each at most R requests/s, so
// the bound is one account's pulls / R.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Table from 'cli-table3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/platform/config/env.js';
import { loadJobs } from '../../src/platform/config/jobs.js';
import { addDays } from '../../src/platform/dates/calendar.js';
import { startEmulator } from '../../src/emulator/index.js';
import { backfillPulls, interleaveAccounts } from '../../src/plan/pulls.js';
import { enqueueStream } from '../../src/schedule/enqueue.js';
import { openQueues, type PullQueue } from '../../src/platform/queue/queues.js';
import { startWorkers } from '../backfill/workers.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';

/** Accounts of the run: one emulator each, with its own seed. */
export const ACCOUNTS = ['acct_a', 'acct_b', 'acct_c'] as const;
/** Report definitions every account runs. */
export const ACCOUNT_REPORTS = 20;
/** Traffic cells per day of every emulator: small reports, so the rate limit is what binds. */
const CELLS_PER_DAY = 30;
/** Latency of every report request, ms. */
const LATENCY_MS = 20;
/** First day: in the past, so every day is final in the emulators (lateDataDays 0). */
const FIRST_DAY = '2025-01-01';
/** The second dimension of report i (none for the first of every six): 1-2 dimensions each. */
const SECOND_DIMENSION = [undefined, 'campaign_id', 'creative_id', 'zone_id', 'country', 'device'] as const;

export interface AccountWall {
  readonly account: string;
  readonly pulls: number;
  /** report_loads rows with status loaded. */
  readonly loaded: number;
  /** From the enqueue to the account's last recorded load. */
  readonly wallMs: number;
  readonly rowsLoaded: number;
  readonly rowsExpected: number;
}

export interface AccountsBackfillFigures {
  readonly accounts: number;
  readonly reports: number;
  readonly days: number;
  readonly pulls: number;
  readonly ratePerSecond: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly latencyMs: number;
  readonly cellsPerDay: number;
  /** Requests the emulators served for /v2/reports, retries included. */
  readonly requests: number;
  /** Adding every pull to Redis (enqueueStream), ms. */
  readonly enqueueMs: number;
  /** From the start of the enqueue to the last recorded load. */
  readonly wallMs: number;
  /** Pulls per account / rate: the accounts run in parallel, each at most `ratePerSecond`. */
  readonly boundMs: number;
  readonly wallOverBound: number;
  readonly failed: number;
  readonly rowsLoaded: number;
  /** Rows the emulators serve for every report and day (one request per account and report). */
  readonly rowsExpected: number;
  readonly perAccount: readonly AccountWall[];
}

/** The bound of a backfill of `pullsPerAccount` pulls per account at `rate` requests/s each, ms. */
export function accountsBound(pullsPerAccount: number, rate: number): number {
  if (!(rate > 0)) throw new RangeError(`rate must be above 0, not ${rate}`);
  return (pullsPerAccount / rate) * 1000;
}

/** Report definition i: `scale_acct_rNN`, daily, [day] or [day, one more]. */
export function accountReportYaml(i: number): string {
  const second = SECOND_DIMENSION[i % SECOND_DIMENSION.length];
  const dims = second === undefined ? '[day]' : `[day, ${second}]`;
  return (
    `name: ${accountReportName(i)}\ndimensions: ${dims}\nperiod: day\nlookback_days: 0\n` +
    `schedule: { cron: '0 3 * * *', timezone: 'UTC' }\n`
  );
}

export const accountReportName = (i: number) => `scale_acct_r${String(i).padStart(2, '0')}`;

/** The accounts file: each account's emulator, its key from a variable, its rate limit. */
export function accountsYaml(
  accounts: readonly { readonly name: string; readonly baseUrl: string; readonly keyEnv: string }[],
  rate: number,
): string {
  return (
    'accounts:\n' +
    accounts
      .map(
        (a) =>
          `  - name: ${a.name}\n    base_url: ${a.baseUrl}\n    api_key_env: ${a.keyEnv}\n    rate_limit: ${rate}\n`,
      )
      .join('')
  );
}

/** Leaves of a report body's `items` (nested one level per dimension): its rows. */
export function countRows(items: unknown, depth: number): number {
  if (typeof items !== 'object' || items === null) return 0;
  const values = Object.values(items as Record<string, unknown>);
  if (depth <= 1) return values.length;
  return values.reduce<number>((n, v) => n + countRows(v, depth - 1), 0);
}

/** Rows the emulator at `baseUrl` serves for `dimensions` over from..until (at most 366 days). */
async function servedRows(baseUrl: string, dimensions: readonly string[], from: string, until: string) {
  const q = new URLSearchParams({ date_from: from, date_until: until });
  for (const d of dimensions) q.append('dimensions', d);
  const res = await fetch(`${baseUrl}/reports?${q}`, { headers: { authorization: 'Bearer demo-key' } });
  if (!res.ok) throw new Error(`bench accounts: emulator answered ${res.status} for the expected rows`);
  const body = (await res.json()) as { items?: unknown };
  return countRows(body.items, dimensions.length);
}

/** Runs the backfill once on fresh emulators, database and Redis prefix, all removed after. */
export async function runAccountsBackfill(
  o: BenchOptions,
  say: (line: string) => void,
): Promise<AccountsBackfillFigures> {
  const days = o.scaleDays;
  const rate = o.scaleRate;
  const dir = await mkdtemp(join(tmpdir(), 'adops-bench-accounts-'));
  const forgetDir = onInterrupt(() => rm(dir, { recursive: true, force: true }));
  const jobsDir = join(dir, 'jobs');
  await mkdir(jobsDir);
  for (let i = 0; i < ACCOUNT_REPORTS; i++)
    await writeFile(join(jobsDir, `${accountReportName(i)}.yaml`), accountReportYaml(i));
  const reports = loadJobs(jobsDir).reports;
  const emulators: Awaited<ReturnType<typeof startEmulator>>[] = [];
  const prefix = `adops-bench-accounts-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  const forgetKeys = onInterrupt(() => deleteKeys(redis, `${prefix}*`));
  let db: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  try {
    for (const [i] of ACCOUNTS.entries())
      emulators.push(
        await startEmulator({
          seed: o.seed + i,
          cellsPerDay: CELLS_PER_DAY,
          lateDataDays: 0,
          faults: { latencyMs: LATENCY_MS, paths: ['/v2/reports'], seed: o.seed + i },
        }),
      );
    const keyEnv = (name: string) => `BENCH_KEY_${name.toUpperCase()}`;
    const accountsFile = join(dir, 'accounts.yaml');
    await writeFile(
      accountsFile,
      accountsYaml(
        ACCOUNTS.map((name, i) => ({ name, baseUrl: emulators[i]?.url ?? '', keyEnv: keyEnv(name) })),
        rate,
      ),
    );
    db = await createBenchDatabase(o.adminUrl, 'accounts', reports);
    const env: Record<string, string> = {
      PATH: o.path,
      ADOPS_ACCOUNTS_FILE: accountsFile,
      ...Object.fromEntries(ACCOUNTS.map((name) => [keyEnv(name), 'demo-key'])),
      DATABASE_URL: db.url,
      REDIS_URL: o.redisUrl,
      ADOPS_SCHEMA: BENCH_SCHEMA,
      ADOPS_JOBS_DIR: jobsDir,
      ADOPS_QUEUE_PREFIX: prefix,
      ADOPS_METRICS_PORT: '0',
      LOG_LEVEL: o.logLevel,
    };
    const config = loadConfig(env);
    const queues = await openQueues(config);
    try {
      workers = await startWorkers(o.workers, o.concurrency, env, () => queues.pulls.getWorkersCount());
      const to = addDays(FIRST_DAY, days - 1);
      const pulls = ACCOUNTS.length * reports.length * days;
      say(
        `scale: ${ACCOUNTS.length} accounts x ${reports.length} reports x ${days} days = ` +
          `${pulls.toLocaleString('en-US')} pulls at ${rate} requests/s per account, ` +
          `${o.workers} workers x ${o.concurrency}...`,
      );
      // Let the rate limit's current second end, so the run starts with a whole window.
      await new Promise((r) => setTimeout(r, 1_000));
      for (const e of emulators) e.resetStats();
      const started = Date.now();
      const enqueued = await enqueueStream(
        queues.pulls,
        interleaveAccounts(config.accounts, reports, (own) =>
          backfillPulls(own, FIRST_DAY, to, 'newest-first'),
        ),
      );
      const enqueueMs = Date.now() - started;
      if (enqueued.added !== pulls)
        throw new Error(`bench accounts: ${enqueued.added} pulls added, expected ${pulls}`);
      const boundMs = accountsBound(pulls / ACCOUNTS.length, rate);
      await waitForQueue(queues.pulls, Math.max(120_000, boundMs * 10), say);
      const requests = emulators.reduce((n, e) => n + (e.stats().requests['GET /v2/reports'] ?? 0), 0);
      const failed = (await queues.pulls.getJobCounts('failed')).failed ?? 0;
      const perAccount: AccountWall[] = [];
      for (const [i, account] of ACCOUNTS.entries()) {
        const emulator = emulators[i];
        if (emulator === undefined) throw new Error('bench accounts: an emulator is missing');
        let rowsExpected = 0;
        for (const r of reports) rowsExpected += await servedRows(emulator.url, r.dimensions, FIRST_DAY, to);
        const got = await accountLoads(db.url, account);
        perAccount.push({
          account,
          pulls: reports.length * days,
          loaded: got.loaded,
          wallMs: got.lastMs - started,
          rowsLoaded: got.rows,
          rowsExpected,
        });
      }
      const wallMs = Math.max(...perAccount.map((a) => a.wallMs));
      const figures: AccountsBackfillFigures = {
        accounts: ACCOUNTS.length,
        reports: reports.length,
        days,
        pulls,
        ratePerSecond: rate,
        workers: o.workers,
        concurrency: o.concurrency,
        latencyMs: LATENCY_MS,
        cellsPerDay: CELLS_PER_DAY,
        requests,
        enqueueMs,
        wallMs,
        boundMs,
        wallOverBound: wallMs / boundMs,
        failed,
        rowsLoaded: perAccount.reduce((n, a) => n + a.rowsLoaded, 0),
        rowsExpected: perAccount.reduce((n, a) => n + a.rowsExpected, 0),
        perAccount,
      };
      say(
        `  wall ${(wallMs / 1000).toFixed(1)} s against the bound ${(boundMs / 1000).toFixed(1)} s ` +
          `(${figures.wallOverBound.toFixed(2)}x), ${failed} failed, ` +
          `${figures.rowsLoaded.toLocaleString('en-US')} of ${figures.rowsExpected.toLocaleString('en-US')} rows`,
      );
      for (const a of perAccount)
        if (a.rowsLoaded !== a.rowsExpected || a.loaded !== a.pulls)
          throw new Error(
            `bench accounts: ${a.account} loaded ${a.loaded} of ${a.pulls} pulls, ` +
              `${a.rowsLoaded} rows, expected ${a.rowsExpected} (${failed} pulls failed)`,
          );
      return figures;
    } finally {
      await queues.close();
    }
  } finally {
    await workers?.stop();
    for (const e of emulators) await e.close();
    await deleteKeys(redis, `${prefix}*`).finally(() => redis.disconnect());
    forgetKeys();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
    forgetDir();
  }
}

/**
 * Waits until no pull is waiting, delayed or active. Job states are not read one by one: past
 * 20,000 finished jobs BullMQ drops the oldest (KEEP_COMPLETED), and the warehouse is the record.
 */
async function waitForQueue(queue: PullQueue, timeoutMs: number, say: (line: string) => void) {
  const started = Date.now();
  let lastSaid = started;
  for (;;) {
    const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    const left = Object.values(c).reduce((a, b) => a + b, 0);
    if (left === 0) return;
    if (Date.now() - started > timeoutMs)
      throw new Error(`bench accounts: ${left} pulls still queued after ${Math.round(timeoutMs / 1000)} s`);
    if (Date.now() - lastSaid >= 15_000) {
      say(
        `  ${left.toLocaleString('en-US')} pulls left after ${Math.round((Date.now() - started) / 1000)} s`,
      );
      lastSaid = Date.now();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** An account's loaded pulls and rows, and when its last load was recorded (epoch ms). */
async function accountLoads(url: string, account: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ loaded: string; rows: string | null; last: Date | null }>(
      `SELECT count(*) FILTER (WHERE status = 'loaded')::text AS loaded,
              (sum(rows) FILTER (WHERE status = 'loaded'))::text AS rows, max(recorded_at) AS last
         FROM ${pg.escapeIdentifier(BENCH_SCHEMA)}.report_loads WHERE account = $1`,
      [account],
    );
    const r = rows[0];
    return { loaded: Number(r?.loaded ?? 0), rows: Number(r?.rows ?? 0), lastMs: r?.last?.getTime() ?? 0 };
  } finally {
    await c.end();
  }
}

/** The figures as a table (for `npm run bench -- --scale`). */
export function renderAccountsBackfill(f: AccountsBackfillFigures): string {
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const t = new Table({ head: ['account', 'pulls', 'loaded', 'wall', 'wall / bound', 'rows (expected)'] });
  for (const a of f.perAccount)
    t.push([
      a.account,
      a.pulls,
      a.loaded,
      secs(a.wallMs),
      `${(a.wallMs / f.boundMs).toFixed(2)}x`,
      `${a.rowsLoaded} (${a.rowsExpected})`,
    ]);
  t.push([
    'all',
    f.pulls,
    f.perAccount.reduce((n, a) => n + a.loaded, 0),
    secs(f.wallMs),
    `${f.wallOverBound.toFixed(2)}x`,
    `${f.rowsLoaded} (${f.rowsExpected})`,
  ]);
  return (
    `scale, accounts backfill: ${f.accounts} accounts x ${f.reports} reports x ${f.days} days, ` +
    `${f.ratePerSecond} requests/s per account, ${f.workers} workers x ${f.concurrency}, latency ` +
    `${f.latencyMs} ms; bound = pulls per account / rate = ${secs(f.boundMs)}; enqueue ${secs(f.enqueueMs)}; ` +
    `${f.requests} requests, ${f.failed} failed\n${t.toString()}`
  );
}
