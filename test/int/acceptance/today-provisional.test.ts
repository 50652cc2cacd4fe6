// Today, provisional (issue 38), on Redis, Postgres and the emulator over HTTP, with the clock fixed through
// the seams (the worker's and the tick's `now`, the emulator's clock, status' `now`): a report in
// America/Los_Angeles pulls its unfinished day twice, provisional, then its first pull after local midnight
// makes the day final; status never calls it missing or unreconciled meanwhile, and counts it once after.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClientFromConfig } from '../../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { accountConfig } from '../../../src/platform/config/env.js';
import type { JobSet, ReportJob } from '../../../src/platform/config/jobs.js';
import { rowsOf as query, warehouseOf } from '../../../src/platform/pg/handle.js';
import { loadStates } from '../../../src/pull/history.js';
import { recentLoadsSql } from '../../../src/pull/history-sql.js';
import { enqueuePulls, readHealPlan, waitForPulls } from '../../../src/schedule/enqueue.js';
import { runTick, type TickDeps } from '../../../src/schedule/scheduler.js';
import { setupWarehouse } from '../../../src/schema/migrate.js';
import { checkProblems, renderStatus } from '../../../src/status/render.js';
import { collectStatus } from '../../../src/status/status.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, type Harness } from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';

const S = TEST_SCHEMA;
const DAY = '2026-01-14'; // a Wednesday; Los Angeles is UTC-8 in January
const report: ReportJob = {
  kind: 'report',
  name: 'today_zone',
  dimensions: ['day', 'zone_id'],
  period: 'day',
  lookbackDays: 1,
  schedule: { cron: '0 3 * * *', timezone: 'America/Los_Angeles' },
  today: { everyMs: 30 * 60_000 },
  file: 'today_zone.yaml',
};
const jobs: JobSet = { reports: [report], entities: [] };
const at = {
  afternoon: new Date('2026-01-14T23:00:00Z'), // 15:00 on the 14th in Los Angeles
  evening: new Date('2026-01-15T06:00:00Z'), // 22:00 on the 14th
  pastMidnight: new Date('2026-01-15T08:30:00Z'), // 00:30 on the 15th
  nightly: new Date('2026-01-15T11:00:00Z'), // 03:00 on the 15th: the schedule's tick
};

let h: Harness;
let emulator: RunningEmulator;
let clock = at.afternoon;
beforeEach(async () => {
  clock = at.afternoon;
  // Late data: a day's numbers grow for two days after it, so each refresh of today differs.
  emulator = await startEmulator({ seed: 5, cellsPerDay: 40, lateDataDays: 2, now: () => clock });
  h = await createHarness({ jobs, env: { ADOPS_BASE_URL: emulator.url } });
  await setupWarehouse(warehouseOf(h.db.pool, S), { reports: jobs.reports });
  await h.worker({ now: () => clock });
});
afterEach(async () => {
  await h.close();
  await emulator.close();
});

const wh = () => warehouseOf(h.db.pool, S);
const tick = (today: boolean): Promise<unknown> => {
  const deps: TickDeps = {
    reports: new Map([[report.name, report]]),
    pulls: h.queues.pulls,
    states: (r, from, to, account) => loadStates(wh(), r, from, to, account),
    healDays: 3,
    gapCap: 0,
    now: () => clock,
  };
  const data = today ? { report: report.name, today: 'yes' } : { report: report.name };
  return runTick(deps, { data, timestamp: clock.getTime(), opts: { prevMillis: clock.getTime() } });
};
/** Waits until the pull queue holds nothing waiting or running. */
const drained = () =>
  until(
    'the pulls to finish',
    async () => {
      const c = await h.queues.pulls.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(c).every((n) => n === 0);
    },
    20_000,
  );
const loadsOf = async (day: string) =>
  (
    await h.db.pool.query<{
      status: string;
      provisional: boolean;
      rows: number;
      why: string | null;
      restatement: unknown;
    }>(
      `SELECT status, provisional, rows, unreconciled_reason AS why, restatement FROM ${S}.report_loads
        WHERE report = $1 AND period_start = $2 ORDER BY load_id`,
      [report.name, day],
    )
  ).rows;
const rowsOf = async (day: string) =>
  (
    await h.db.pool.query<{ zone: string; c: string; p: boolean }>(
      `SELECT zone_id::text AS zone, concat_ws(',', ad_requests, filled_impressions, impressions,
              measurable_impressions, viewable_impressions) AS c, provisional AS p
         FROM ${S}.bi_today_zone WHERE day = $1 ORDER BY zone_id`,
      [day],
    )
  ).rows;
const status = (now: Date) => collectStatus(wh(), jobs, h.queues, 2, now);

describe('today, provisional', () => {
  it('loads the unfinished day provisionally, each refresh replacing the last, and makes it final once', async () => {
    // The day before is loaded and final, as the schedule left it.
    const before = await enqueuePulls(h.queues.pulls, [
      { report: report.name, period: { start: '2026-01-13', end: '2026-01-13' } },
    ]);
    expect((await waitForPulls(h.queues.pulls, before)).failed).toEqual([]);

    // Two `today:` ticks, in the afternoon and the evening; the second one's body has no totals.
    await tick(true);
    await drained();
    const afternoon = await rowsOf(DAY);
    clock = at.evening;
    emulator.setQuirks({ totals: 'missing' });
    await tick(true);
    await drained();
    emulator.setQuirks({});
    const evening = await rowsOf(DAY);
    expect(afternoon.length).toBeGreaterThan(0);
    expect([...afternoon, ...evening].every((r) => r.p)).toBe(true);
    expect(evening).not.toEqual(afternoon);
    expect(await loadsOf(DAY)).toEqual([
      { status: 'loaded', provisional: true, rows: afternoon.length, why: null, restatement: null },
      { status: 'loaded', provisional: true, rows: evening.length, why: 'no totals', restatement: null },
    ]);
    // `adops loads` says which loads were provisional.
    const listed = await query(wh(), recentLoadsSql(S, { report: report.name, failed: false, limit: 5 }));
    expect(listed.map((l) => [l.period_start, l.provisional])).toEqual([
      [DAY, true],
      [DAY, true],
      ['2026-01-13', false],
    ]);
    const during = (await status(at.evening)).reports[0];
    expect(during?.today).toMatchObject({ period: DAY, rows: evening.length });
    expect(during?.lastLoaded).toBe('2026-01-13');

    // Past midnight in Los Angeles, before the nightly tick: the day has ended but is still provisional.
    clock = at.pastMidnight;
    const between = await status(at.pastMidnight);
    const r = between.reports[0];
    expect(r).toMatchObject({ missing: [], overdue: [], failed: [], unreconciled: [], provisional: [DAY] });
    expect(r).toMatchObject({ expected: 2, loaded: 1, lastLoaded: '2026-01-13', freshness: { late: false } });
    expect(r?.cells.at(-1)).toBe('provisional');
    expect(r).not.toHaveProperty('today');
    expect(checkProblems(between)).toEqual([]);
    expect(renderStatus(between)).toContain(`today_zone ${DAY}: ended, provisional until its final pull`);
    // Heal wants its final pull, not a second provisional one.
    const heal = await readHealPlan(wh(), jobs.reports, 2, at.pastMidnight);
    expect(heal).toEqual([{ account: 'default', report: report.name, period: { start: DAY, end: DAY } }]);

    // The nightly tick pulls yesterday and its lookback: the day's one final load.
    clock = at.nightly;
    await tick(false);
    await drained();
    const final = await rowsOf(DAY);
    expect(final.every((row) => !row.p)).toBe(true);
    const loads = await loadsOf(DAY);
    expect(loads.filter((l) => !l.provisional)).toEqual([
      { status: 'loaded', provisional: false, rows: final.length, why: null, restatement: null },
    ]);
    expect(loads).toHaveLength(3);

    // The rows equal a pull of the finished day, straight from the API.
    const api = createApiClientFromConfig(accountConfig(h.config, h.config.accounts[0]!));
    const fetched = await api.fetchReport({
      dimensions: report.dimensions,
      period: { start: DAY, end: DAY },
    });
    const chunks: Buffer[] = [];
    for await (const chunk of fetched.body) chunks.push(chunk);
    await api.close();
    const direct = parseReport(Buffer.concat(chunks), report.dimensions).rows;
    expect(final).toEqual(
      direct
        .map((row) => ({ zone: row.dims[1], c: row.counters.join(','), p: false }))
        .sort((a, b) => Number(a.zone) - Number(b.zone)),
    );

    // Counted once, loaded, nothing missing or unreconciled.
    const after = (await status(at.nightly)).reports[0];
    expect(after).toMatchObject({ expected: 2, loaded: 2, missing: [], unreconciled: [], provisional: [] });
    expect(after?.lastLoaded).toBe(DAY);
    expect(after?.cells.at(-1)).toBe('loaded');
  });

  it('refuses a provisional pull of a period not started, and loads a late one as final', async () => {
    const pulls = await enqueuePulls(h.queues.pulls, [
      { report: report.name, period: { start: '2026-01-15', end: '2026-01-15' }, provisional: true },
      { report: report.name, period: { start: '2026-01-13', end: '2026-01-13' }, provisional: true },
    ]);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    expect(result.failed.map((f) => f.reason)).toEqual([
      'TerminalError: today_zone 2026-01-15 has not started in its time zone (America/Los_Angeles): nothing is pulled before it starts',
    ]);
    expect(await loadsOf('2026-01-13')).toMatchObject([{ status: 'loaded', provisional: false }]);
    expect(await loadsOf('2026-01-15')).toEqual([]);
  });
});
