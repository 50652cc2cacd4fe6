// Crashes: workers SIGKILLed while writing a period's rows and between fetch and load, the
// loader's Postgres backend terminated mid-load. Every period must end exact, none duplicated.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { openQueues } from '../../../src/platform/queue/queues.js';
import { qualified } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { spawnWorker } from '../../helpers/reliability/child.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { startPipeline } from '../../helpers/pipeline.js';
import { blockRows } from '../../helpers/reliability/pg-block.js';
import { FROM, openSuite, reportRequests, TO, type Suite } from '../../helpers/reliability/suite.js';
import { day, verify } from '../../helpers/reliability/truth.js';

let suite: Suite;
const book = figureBook('crashes');
const TOTAL = 12; // periods: 2 reports x 6 days
const REQUESTS = 2; // one request of the 6 days per report (days_per_request)
const STALL = { lockDurationMs: 2_000, stalledIntervalMs: 500 };

beforeAll(async () => {
  suite = await openSuite();
});
afterAll(async () => {
  book.flush(inject('runId'));
  await suite?.close();
});

/** Loads recorded per status, for the figures and the "nothing twice" check. */
async function loadCounts(pool: import('pg').Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM ${qualified(TEST_SCHEMA, 'report_loads')} GROUP BY status`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/**
 * Backfills through a child worker, kills it at the moment `hold` picks, then lets an in-process
 * worker take over (the killed job comes back through BullMQ's stall check) and checks the truth.
 */
async function crashAndRecover(o: {
  id: string;
  title: string;
  injected: string;
  childEnv?: Record<string, string>;
  /** Runs before the child starts (e.g. to set a trap in Postgres). */
  prepare?: (url: string) => Promise<void>;
  /** Resolves when the child is where it must die. */
  hold: (ctx: { url: string; child: ReturnType<typeof spawnWorker> }) => Promise<() => Promise<void>>;
}) {
  const started = Date.now();
  const { db, env } = await suite.newCase();
  suite.emulator.resetStats();
  const queues = await openQueues(loadConfig(env));
  await o.prepare?.(db.url);
  const child = spawnWorker({ ...env, ...o.childEnv });
  try {
    const { pulls } = await enqueueBackfill(queues.pulls, suite.reports, FROM, TO);
    await child.waitFor(/^READY$/);
    const afterKill = await o.hold({ url: db.url, child });
    await child.kill();
    await afterKill();
    const recovery = await startPipeline({ env, pool: db.pool, jobs: suite.jobs, stall: STALL });
    try {
      const result = await waitForPulls(queues.pulls, pulls, { pollMs: 50 });
      expect(result.failed).toEqual([]);
    } finally {
      await recovery.close();
      suite.logLines.push(...recovery.lines);
    }
    const verdict = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    const loads = await loadCounts(db.pool);
    const requests = reportRequests(suite.emulator);
    book.add({
      id: o.id,
      title: o.title,
      injected: o.injected,
      periodsExact: verdict.exact,
      periodsTotal: verdict.total,
      duplicates: verdict.duplicates,
      retries: requests - REQUESTS,
      failedAsExpected: 0,
      notes: `report_loads: ${JSON.stringify(loads)}; ${requests} report requests`,
      ms: Date.now() - started,
    });
    expect(verdict.problems).toEqual([]);
    expect(verdict).toMatchObject({ exact: TOTAL, total: TOTAL, duplicates: 0 });
    return { loads, requests, pool: db.pool };
  } finally {
    await child.kill();
    suite.logLines.push(...child.logLines);
    await queues.close();
  }
}

describe('a worker killed with SIGKILL loses nothing and duplicates nothing', () => {
  it('killed between fetch and load of a request of 6 days: the request is fetched again and each of its periods loaded once', async () => {
    const report = suite.reports[0] as ReportJob;
    const target = `${report.dimensions.join(',')}/2026-01-03`;
    const run = await crashAndRecover({
      id: 'crash/between-fetch-and-load',
      title: 'SIGKILL between fetch and load',
      injected: `worker killed holding the fetched body of ${report.name} 2026-01-03`,
      childEnv: { REL_PAUSE_AFTER_FETCH: target },
      hold: async ({ child }) => {
        await child.waitFor(/^FETCHED /);
        return async () => undefined;
      },
    });
    // The killed fetch was repeated: one request more than were planned, at least.
    expect(run.requests).toBeGreaterThan(REQUESTS);
    expect(run.loads).toEqual({ loaded: TOTAL });
  });

  it('killed while writing the rows: the open transaction rolls back and the period is loaded once', async () => {
    const report = suite.reports[0] as ReportJob;
    let block: Awaited<ReturnType<typeof blockRows>> | undefined;
    const run = await crashAndRecover({
      id: 'crash/during-copy',
      title: 'SIGKILL while writing the rows',
      injected: `worker killed while its rows of ${report.name} 2026-01-03 were being written inside Postgres`,
      prepare: async (url) => {
        block = await blockRows(url, report, day('2026-01-03'), suite.truth);
      },
      hold: async () => {
        await block?.blockedBackend();
        return async () => {
          await block?.release();
        };
      },
    });
    expect(run.loads.loaded).toBe(TOTAL);
  });
});

describe('the loader losing its Postgres backend mid-load', () => {
  it('pg_terminate_backend while writing the rows: the worker survives, records the failed load, retries it and ends exact', async () => {
    const started = Date.now();
    const { db, env } = await suite.newCase();
    suite.emulator.resetStats();
    const report = suite.reports[1] as ReportJob;
    const queues = await openQueues(loadConfig(env));
    const block = await blockRows(db.url, report, day('2026-01-04'), suite.truth);
    const child = spawnWorker(env);
    let survived = false;
    let recoveredBy = 'the same worker';
    try {
      const { pulls } = await enqueueBackfill(queues.pulls, suite.reports, FROM, TO);
      const pid = await block.blockedBackend();
      await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      await block.release();
      // The worker should carry on; if it dies, stop waiting at once rather than at a timeout.
      const stop = new AbortController();
      child.process.once('exit', () => stop.abort());
      const timer = setTimeout(() => stop.abort(), 30_000);
      const first = await waitForPulls(queues.pulls, pulls, { pollMs: 50, signal: stop.signal });
      clearTimeout(timer);
      survived = child.process.exitCode === null && child.process.signalCode === null;
      if (first.completed.length + first.failed.length < pulls.length) {
        // Finish with another worker so the data figures are still measured.
        recoveredBy = 'a second worker (the first one died)';
        const recovery = await startPipeline({ env, pool: db.pool, jobs: suite.jobs, stall: STALL });
        try {
          await waitForPulls(queues.pulls, pulls, { pollMs: 50 });
        } finally {
          await recovery.close();
          suite.logLines.push(...recovery.lines);
        }
      }
    } finally {
      await block.release().catch(() => undefined);
      await child.kill();
      suite.logLines.push(...child.logLines);
      await queues.close();
    }
    const verdict = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    const { rows: failed } = await db.pool.query<{ error: string }>(
      `SELECT error FROM ${qualified(TEST_SCHEMA, 'report_loads')} WHERE status = 'failed' AND report = $1 AND period_start = '2026-01-04'`,
      [report.name],
    );
    const loads = await loadCounts(db.pool);
    book.add({
      id: 'crash/pg-terminate',
      title: 'pg_terminate_backend mid-load',
      injected: `the loader's backend terminated while writing its rows of ${report.name} 2026-01-04`,
      periodsExact: verdict.exact,
      periodsTotal: verdict.total,
      duplicates: verdict.duplicates,
      retries: reportRequests(suite.emulator) - REQUESTS,
      failedAsExpected: 0,
      notes: `worker ${survived ? 'survived' : 'CRASHED'}; finished by ${recoveredBy}; report_loads: ${JSON.stringify(loads)}`,
      ms: Date.now() - started,
    });
    expect(verdict.problems).toEqual([]);
    expect(verdict).toMatchObject({ exact: TOTAL, total: TOTAL, duplicates: 0 });
    // A lost connection is an error to retry, not a reason for the worker process to die.
    expect(survived).toBe(true);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.error).toMatch(/terminat/i);
  });
});

describe('the API key', () => {
  it('appears in no log line (child processes included), Redis key or value, or database dump', async () => {
    const scans = await suite.scan();
    expect(scans.flatMap((s) => s.found)).toEqual([]);
    expect(suite.logLines.length).toBeGreaterThan(0);
  });
});
