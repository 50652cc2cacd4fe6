// Job schedulers on real Redis: idempotent upserts, removal of deleted definitions, and a cron
// firing every two seconds that loads its window and re-pulls the lookback.
import { Writable } from 'node:stream';
import { main } from '../../../src/cli/main.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobSet, ReportJob } from '../../../src/platform/config/jobs.js';
import { REPORT_QUEUE, TICK_JOB, TICK_QUEUE } from '../../../src/platform/queue/jobs.js';
import { addMonths } from '../../../src/plan/retention.js';
import { partitionName, partitionsOf } from '../../../src/schema/partitions.js';
import { partitionFor } from '../../helpers/partitions.js';
import { scheduledWindow } from '../../../src/plan/pulls.js';
import { syncSchedulers, runTick } from '../../../src/schedule/scheduler.js';
import { loadStates } from '../../../src/pull/history.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, type Harness } from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';
import { localDate } from '../../../src/platform/dates/calendar.js';

let h: Harness | undefined;

/** Runs `adops` in-process with `env`, capturing its output. */
async function adops(args: string[], env: Record<string, string>) {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      out.push(chunk.toString());
      done();
    },
  });
  const code = await main(['node', 'adops', ...args], env, sink, sink);
  return { code, out: out.join('') };
}
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const zoneJob = (cron: string, lookbackDays = 1): ReportJob => ({
  kind: 'report',
  name: 'daily_zone',
  dimensions: ['day', 'zone_id'],
  period: 'day',
  lookbackDays,
  schedule: { cron, timezone: 'UTC' },
  file: 'test',
});

/** The job BullMQ's scheduler of daily_zone hands the tick worker for the run scheduled at `scheduled`. */
const zoneTick = (scheduled: number) => ({
  id: `repeat:adops-report-daily_zone:${scheduled}`,
  data: { report: 'daily_zone' },
  timestamp: Date.now(),
  opts: {},
});

describe('adops schedule', () => {
  it('creates one scheduler per definition, and a second run changes nothing', async () => {
    h = await createHarness();
    const first = await syncSchedulers(h.queues, h.jobs);
    expect(first.created).toHaveLength(h.jobs.reports.length + h.jobs.entities.length);
    const before = await h.queues.ticks.getJobSchedulers(0, -1, true);
    const delayedBefore = (await h.queues.ticks.getDelayed()).map((j) => j.id).sort();
    const second = await syncSchedulers(h.queues, h.jobs);
    expect(second).toEqual({ created: [], updated: [], removed: [], unchanged: expect.any(Array) });
    expect(second.unchanged).toHaveLength(first.created.length);
    expect(await h.queues.ticks.getJobSchedulers(0, -1, true)).toEqual(before);
    expect((await h.queues.ticks.getDelayed()).map((j) => j.id).sort()).toEqual(delayedBefore);
    // Scheduler template data names the report only.
    expect(before.map((s) => s.template?.data)).toContainEqual({ report: 'daily_zone' });
    // The command says what it did and when each fires next.
    const cli = await adops(['schedule'], h.env);
    expect(cli.code).toBe(0);
    expect(cli.out).toMatch(
      /^unchanged adops-report-daily_zone: "0 3 \* \* \*" UTC, next \d{4}-\d\d-\d\dT03:00:00\.000Z$/m,
    );
    expect(cli.out).toContain('0 created, 0 updated, 6 unchanged, 0 removed');
  });

  it('removes the schedulers of deleted definitions and updates changed crons', async () => {
    h = await createHarness();
    await syncSchedulers(h.queues, h.jobs);
    const fewer: JobSet = {
      reports: h.jobs.reports
        .filter((r) => r.name !== 'hourly')
        .map((r) => (r.name === 'daily_zone' ? zoneJob('0 4 * * *') : r)),
      entities: [],
    };
    const r = await syncSchedulers(h.queues, fewer);
    expect([...r.removed].sort()).toEqual(['adops-entities-entities', 'adops-report-hourly']);
    expect(r.updated).toEqual(['adops-report-daily_zone']);
    const ids = (await h.queues.ticks.getJobSchedulers(0, -1)).map((s) => s.key);
    expect(ids).not.toContain('adops-report-hourly');
    expect(await h.queues.syncs.getJobSchedulers(0, -1)).toEqual([]);
  });
});

describe('a today: scheduler', () => {
  it('ticks every today.every, loading the current day provisional; kept on a second run, removed with the field', async () => {
    const today: ReportJob = { ...zoneJob('0 3 * * *'), today: { everyMs: 1_000 } };
    h = await createHarness({ jobs: { reports: [today], entities: [] } });
    await h.worker();
    const first = await syncSchedulers(h.queues, h.jobs);
    expect(first.created).toEqual(['adops-report-daily_zone', 'adops-today-daily_zone']);
    expect((await syncSchedulers(h.queues, h.jobs)).unchanged).toEqual(first.created);
    const scheduler = (await h.queues.ticks.getJobSchedulers(0, -1)).find(
      (s) => s.key === 'adops-today-daily_zone',
    );
    expect(Number(scheduler?.every)).toBe(1_000);
    expect(scheduler?.template?.data).toEqual({ report: 'daily_zone', today: 'yes' });
    const day = localDate(new Date(), 'UTC');
    const provisional = async () =>
      (
        await h!.db.pool.query(
          `SELECT 1 FROM "${TEST_SCHEMA}".report_loads
            WHERE report = 'daily_zone' AND period_start = $1 AND provisional AND status = 'loaded'`,
          [day],
        )
      ).rowCount ?? 0;
    await until('a provisional load of today', async () => (await provisional()) > 0, 20_000);
    const cli = await adops(['schedule'], { ...h.env, ADOPS_JOBS_DIR: 'jobs' });
    expect(cli.out).toContain('removed adops-today-daily_zone');
  });
});

describe('a scheduler tick', () => {
  it('computes its window from the scheduled time, not the clock, and repairs gaps up to now', async () => {
    h = await createHarness();
    const report = zoneJob('0 3 * * *');
    const scheduled = Date.UTC(2026, 0, 10, 3, 0, 0);
    const result = await runTick(
      {
        reports: new Map([[report.name, report]]),
        pulls: h.queues.pulls,
        states: (r, from, to) => loadStates(warehouseOf(h!.db.pool, TEST_SCHEMA), r, from, to),
        healDays: 4,
        gapCap: 10,
        // The worker got to the 2026-01-10 tick two days late.
        now: () => new Date(Date.UTC(2026, 0, 12, 9)),
      },
      zoneTick(scheduled),
    );
    expect(result.window.map((p) => p.start)).toEqual(['2026-01-08', '2026-01-09']);
    expect(result.gaps.map((p) => p.start)).toEqual(['2026-01-11', '2026-01-10']);
    // Window and gaps, consecutive days, in one request (days_per_request).
    const waiting = await h.queues.pulls.getWaiting();
    expect(waiting.map((j) => [j.data.periodStart, j.data.until])).toEqual([['2026-01-08', '2026-01-11']]);
    expect(Object.keys(waiting[0]!.data).sort()).toEqual([
      'account',
      'periodEnd',
      'periodStart',
      'report',
      'until',
    ]);
    expect(waiting.every((j) => j.data.account === 'default')).toBe(true);
  });

  it('never plans a period before start_date: the later of the report and the account one', async () => {
    h = await createHarness();
    const report: ReportJob = { ...zoneJob('0 3 * * *'), startDate: '2026-01-05' };
    const scheduled = Date.UTC(2026, 0, 10, 3, 0, 0);
    const result = await runTick(
      {
        reports: new Map([[report.name, report]]),
        pulls: h.queues.pulls,
        states: (r, from, to, account) =>
          loadStates(warehouseOf(h!.db.pool, TEST_SCHEMA), r, from, to, account),
        accounts: [
          { name: 'north', reports: undefined, startDate: '2026-01-09' },
          { name: 'south', reports: undefined },
        ],
        healDays: 8,
        gapCap: 10,
        now: () => new Date(Date.UTC(2026, 0, 12, 9)),
      },
      zoneTick(scheduled),
    );
    expect(result.added).toBe(2); // each account's days in one request
    const waiting = await h.queues.pulls.getWaiting();
    const of = (account: string) =>
      waiting.filter((j) => j.data.account === account).map((j) => [j.data.periodStart, j.data.until]);
    // north: its own start (2026-01-09) is later than the report's; south: the report's (2026-01-05).
    expect(of('north')).toEqual([['2026-01-09', '2026-01-11']]);
    expect(of('south')).toEqual([['2026-01-05', '2026-01-11']]);
  });

  it('fires from a cron every two seconds: loads its window and re-pulls the lookback periods', async () => {
    const report = zoneJob('*/2 * * * * *', 1);
    h = await createHarness({ jobs: { reports: [report], entities: [] }, env: { ADOPS_HEAL_DAYS: '3' } });
    const harness = h;
    const events = harness.queues.backend.events(REPORT_QUEUE);
    try {
      await events.waitUntilReady();
      await harness.worker();
      const window = scheduledWindow(new Date(), 'UTC', 'day', 1);
      const loadsPerPeriod = async () => {
        const { rows } = await harness.db.pool.query<{ start: string; n: string }>(
          `SELECT period_start::text AS start, count(*) AS n FROM "${TEST_SCHEMA}".report_loads
            WHERE report = 'daily_zone' AND status = 'loaded' GROUP BY period_start`,
        );
        return new Map(rows.map((r) => [r.start, Number(r.n)]));
      };
      const repulled = new Promise<Map<string, number>>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('the window was not pulled twice within 20 s')),
          20_000,
        );
        events.on('completed', () => {
          void loadsPerPeriod().then((m) => {
            if (window.every((p) => (m.get(p.start) ?? 0) >= 2)) {
              clearTimeout(timer);
              resolve(m);
            }
          });
        });
      });
      // An archived body past ADOPS_RAW_RETENTION_DAYS (30): the tick's housekeeping prunes it.
      const { rows: old } = await harness.db.pool.query<{ load_id: string }>(
        `INSERT INTO "${TEST_SCHEMA}".report_loads (report, period_start, period_end, dimensions, status, http_attempts, error)
         VALUES ('daily_zone', '2020-01-01', '2020-01-01', '{day,zone_id}', 'failed', 1, 'old') RETURNING load_id`,
      );
      await harness.db.pool.query(
        `INSERT INTO "${TEST_SCHEMA}".report_raw (load_id, body_gzip, body_bytes, body_sha256, received_sha256, archived_at)
         VALUES ($1, '\\x00', 1, 'x', 'x', now() - interval '40 days')`,
        [old[0]?.load_id],
      );
      await syncSchedulers(harness.queues, harness.jobs);
      const loads = await repulled;
      const { rows: kept } = await harness.db.pool.query<{ old: string; recent: string }>(
        `SELECT count(*) FILTER (WHERE archived_at < now() - interval '30 days') AS old,
                count(*) FILTER (WHERE archived_at >= now() - interval '30 days') AS recent
           FROM "${TEST_SCHEMA}".report_raw`,
      );
      expect(kept[0]).toEqual({ old: '0', recent: expect.not.stringMatching(/^0$/) as unknown });
      // The window (yesterday and one lookback day) is pulled on every tick...
      for (const p of window) expect(loads.get(p.start)).toBeGreaterThanOrEqual(2);
      // ...and the gap repair filled the third day of ADOPS_HEAL_DAYS=3, which no window covers.
      const { rows } = await harness.db.pool.query<{ n: string }>(
        `SELECT count(DISTINCT period_start) AS n FROM "${TEST_SCHEMA}".report_daily_zone`,
      );
      expect(Number(rows[0]?.n)).toBe(3);
    } finally {
      await harness.queues.ticks.removeJobScheduler('adops-report-daily_zone');
      await events.close();
    }
  });
});

describe('a tick run by a worker', () => {
  it("makes its report's partitions ahead and drops the ones past retention_months", async () => {
    const report: ReportJob = { ...zoneJob('0 3 * * *'), retentionMonths: 1 };
    h = await createHarness({ jobs: { reports: [report], entities: [] }, env: { ADOPS_HEAL_DAYS: '1' } });
    const harness = h;
    const now = new Date();
    const ahead = addMonths(now.toISOString().slice(0, 10), 2);
    const old = addMonths(now.toISOString().slice(0, 10), -4);
    // A month of history long past retention, and the furthest month ahead gone missing.
    await partitionFor(harness.db.pool, TEST_SCHEMA, 'report_daily_zone', old);
    await harness.db.pool.query(`DROP TABLE ${TEST_SCHEMA}.${partitionName('report_daily_zone', ahead)}`);
    const months = async () =>
      (await partitionsOf(warehouseOf(harness.db.pool, TEST_SCHEMA), 'report_daily_zone')).map((p) => p.from);
    expect(await months()).toContain(old);
    expect(await months()).not.toContain(ahead);
    const events = harness.queues.backend.events(TICK_QUEUE);
    try {
      await events.waitUntilReady();
      await harness.worker();
      const job = await harness.queues.ticks.add(TICK_JOB, { report: 'daily_zone' });
      await job.waitUntilFinished(events, 20_000);
    } finally {
      await events.close();
    }
    expect(await months()).toContain(ahead);
    expect(await months()).not.toContain(old);
  });
});
