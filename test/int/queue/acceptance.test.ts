// The acceptance runs, with real processes where it matters: two `adops worker` processes
// against an emulator failing 20% of requests, a worker SIGKILLed mid-backfill, and Redis losing
// the queue mid-backfill. Each must leave the warehouse equal, row for row, to a fault-free run.
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import type { FaultOptions } from '../../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import {
  createHarness,
  loseQueue,
  lastDays,
  snapshot,
  unreconciledCount,
  type Harness,
} from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';

const DAYS = 30;
const range = lastDays(DAYS);
const FAULTS: FaultOptions = {
  failRate: 0.09,
  dropRate: 0.04,
  truncateRate: 0.04,
  rateLimitRate: 0.03,
  // Retry-After 0: the pause path runs without making the test wait (failures.test.ts times a real one).
  retryAfterSeconds: 0,
  paths: ['/v2/reports'],
  seed: 5,
};

let reference: Record<string, unknown[]>;
let expectedPulls: number; // jobs: one request of up to days_per_request (7) days each
let expectedPeriods: number;
beforeAll(async () => {
  // The fault-free run every scenario must equal.
  const h = await createHarness();
  try {
    await h.worker({ concurrency: 6 });
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, range.from, range.to);
    expectedPulls = pulls.length;
    expectedPeriods = DAYS * h.jobs.reports.length;
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 100 });
    expect(result.failed).toEqual([]);
    reference = await snapshot(h.db.pool, h.jobs);
  } finally {
    await h.close();
  }
});

let h: Harness | undefined;
const procs: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.kill('SIGKILL')));
  await h?.close();
  h = undefined;
});
afterAll(() => undefined);

/** Starts `adops worker` as a child process and waits until it consumes. */
async function workerProcess(harness: Harness, stallSeconds?: number): Promise<CliProcess> {
  const stall = stallSeconds === undefined ? [] : ['--stall-seconds', String(stallSeconds)];
  const p = spawnCli(['worker', '--concurrency', '3', ...stall], {
    ...harness.env,
    LOG_LEVEL: 'info',
  });
  procs.push(p);
  await p.waitFor(/"msg":"worker started"/);
  return p;
}

/** Runs `adops` in this process with the harness' environment. */
async function adops(args: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _enc, done) {
        into.push(chunk.toString());
        done();
      },
    });
  const code = await main(['node', 'adops', ...args], env, sink(out), sink(err));
  return { code, out: out.join(''), err: err.join('') };
}

/** Loaded attempts per report and period: exactly one each means nothing was loaded twice. */
async function loadedPerPeriod(harness: Harness): Promise<number[]> {
  const { rows } = await harness.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'
      GROUP BY report, period_start, period_end`,
  );
  return rows.map((r) => Number(r.n));
}

const loadedLines = (p: CliProcess) =>
  p
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"msg":"pull loaded"')).length;

describe('acceptance', () => {
  it('backfill --all over 30 days with 2 workers and 20% faults loads every period once, equal to a fault-free run', async () => {
    h = await createHarness({ faults: FAULTS });
    const [a, b] = await Promise.all([workerProcess(h), workerProcess(h)]);
    const run = await adops(['backfill', '--all', '--from', range.from, '--to', range.to, '--wait'], h.env);
    expect(run.err).not.toMatch(/failed:/);
    expect(run.code).toBe(0);
    expect(run.out).toContain(`${expectedPulls} pulls done, 0 failed`);
    expect(await snapshot(h.db.pool, h.jobs)).toEqual(reference);
    expect(await unreconciledCount(h.db.pool)).toBe(0);
    const perPeriod = await loadedPerPeriod(h);
    expect(perPeriod).toHaveLength(expectedPeriods);
    expect(perPeriod.every((n) => n === 1)).toBe(true);
    // Both processes did work, and the emulator really did inject faults.
    expect(loadedLines(a!)).toBeGreaterThan(0);
    expect(loadedLines(b!)).toBeGreaterThan(0);
    expect(loadedLines(a!) + loadedLines(b!)).toBe(expectedPulls);
    const faults = h.emulator.stats().faults;
    expect(
      (faults.fail ?? 0) + (faults.drop ?? 0) + (faults.truncate ?? 0) + (faults.rate_limit ?? 0),
    ).toBeGreaterThan(2); // of 25 requests (7 days each), not 150
  });

  it('a worker SIGKILLed mid-backfill, then restarted: the backfill completes with the same exact result', async () => {
    h = await createHarness({ faults: { latencyMs: [10, 40], paths: ['/v2/reports'] } });
    // Its short lock lets the replacement see its jobs as stalled within seconds.
    const killed = await workerProcess(h, 2);
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, range.from, range.to);
    await killed.waitFor(/"msg":"pull loaded"/);
    const active = await h.queues.pulls.getActiveCount();
    expect(await killed.kill('SIGKILL')).toBe('SIGKILL');
    expect(active).toBeGreaterThan(0);
    // Restarted, as a supervisor would: the same command again.
    await workerProcess(h, 2);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 100 });
    expect(result.failed).toEqual([]);
    expect(await snapshot(h.db.pool, h.jobs)).toEqual(reference);
    expect(await unreconciledCount(h.db.pool)).toBe(0);
    // The killed worker's running jobs were found stalled and handed over, not lost.
    const completed = await h.queues.pulls.getCompleted(0, -1);
    expect(completed.filter((j) => j.stalledCounter > 0).length).toBeGreaterThan(0);
  });

  it('every Postgres session cut mid-backfill, as in a restart: the backfill completes with the same exact result', async () => {
    h = await createHarness({ faults: { latencyMs: [10, 40], paths: ['/v2/reports'] } });
    // A job whose completion was cut off is taken up again by the stall check: keep its lock short.
    await workerProcess(h, 2);
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, range.from, range.to);
    const loaded = async () =>
      Number(
        (
          await h!.db.pool.query<{ n: string }>(
            `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
          )
        ).rows[0]?.n,
      );
    await until('10 periods loaded', async () => (await loaded()) >= 10, 120_000);
    // The worker's warehouse pool, and on the Postgres queue its queue pool and LISTEN connection.
    const { rows } = await h.db.pool.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    expect(rows[0]?.n).toBeGreaterThan(0);
    expect(await loaded()).toBeLessThan(expectedPeriods);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 100 });
    expect(result.failed).toEqual([]);
    expect(await snapshot(h.db.pool, h.jobs)).toEqual(reference);
    expect(await unreconciledCount(h.db.pool)).toBe(0);
    // Every period loaded; one whose completion the cut lost is pulled again, replacing its rows.
    expect(await loadedPerPeriod(h)).toHaveLength(expectedPeriods);
  }, 120_000);

  it('the queue lost mid-backfill (Redis flushed, the queue tables emptied): adops heal brings the warehouse back to complete and exact', async () => {
    h = await createHarness({ faults: { latencyMs: [10, 30], paths: ['/v2/reports'] } });
    await h.worker({ concurrency: 4 });
    await enqueueBackfill(h.queues.pulls, h.jobs.reports, range.from, range.to);
    // Let a part load, then lose every queue key of this deployment.
    await new Promise<void>((resolve) => {
      const check = async () => {
        const { rows } = await h!.db.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
        );
        if (Number(rows[0]?.n) >= 20) resolve();
        else setTimeout(() => void check(), 50);
      };
      void check();
    });
    expect(await loseQueue(h)).toBeGreaterThan(0);
    expect(await h.queues.pulls.getJobCountByTypes('waiting', 'delayed', 'active')).toBe(0);
    const { rows } = await h.db.pool.query<{ n: string }>(
      `SELECT count(DISTINCT (report, period_start)) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
    );
    expect(Number(rows[0]?.n)).toBeLessThan(expectedPeriods);
    const heal = await adops(['heal', '--days', String(DAYS), '--wait'], h.env);
    expect(heal.err).not.toMatch(/failed:/);
    expect(heal.code).toBe(0);
    expect(heal.out).toMatch(/enqueued \d+ pulls/);
    expect(await snapshot(h.db.pool, h.jobs)).toEqual(reference);
    expect(await unreconciledCount(h.db.pool)).toBe(0);
    const status = await adops(['status', '--days', String(DAYS), '--json'], h.env);
    const parsed = JSON.parse(status.out) as {
      reports: Array<{ missing: unknown[]; failed: unknown[]; loaded: number }>;
    };
    for (const r of parsed.reports) expect([r.missing, r.failed, r.loaded]).toEqual([[], [], DAYS]);
  });
});
