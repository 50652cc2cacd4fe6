// The pure pull plans of src/plan/pulls.ts: windows, gaps, backfill order and the tick.
import { describe, expect, it } from 'vitest';
import { localDate, addDays } from '../../../src/platform/dates/calendar.js';
import { TerminalError } from '../../../src/platform/retry/errors.js';
import {
  healWindow,
  scheduledWindow,
  periodsToHeal,
  planTick,
  zeroRowOutliers,
  type PeriodState,
  backfillPulls,
  planBackfill,
  type PlannedPull,
  scheduledTime,
  todayPulls,
} from '../../../src/plan/pulls.js';
import { periodsBetween, type PeriodUnit } from '../../../src/platform/dates/periods.js';
import fc from 'fast-check';
import { countBackfill } from '../../helpers/plan.js';
import type { ReportJob } from '../../../src/platform/config/jobs.js';

describe('scheduledWindow', () => {
  it('is yesterday and the lookback days before it, in the schedule time zone', () => {
    // 03:00 UTC on 2026-03-10.
    const tick = new Date('2026-03-10T03:00:00Z');
    expect(scheduledWindow(tick, 'UTC', 'day', 2)).toEqual([
      { start: '2026-03-07', end: '2026-03-07' },
      { start: '2026-03-08', end: '2026-03-08' },
      { start: '2026-03-09', end: '2026-03-09' },
    ]);
  });

  it('uses the local date of the tick, not the UTC date', () => {
    // 01:00 on 2026-03-10 in Berlin is still 2026-03-09 in UTC; in Los Angeles it is 2026-03-09 17:00.
    const tick = new Date('2026-03-10T00:00:00Z');
    expect(scheduledWindow(tick, 'Europe/Berlin', 'day', 0)).toEqual([
      { start: '2026-03-09', end: '2026-03-09' },
    ]);
    expect(scheduledWindow(tick, 'America/Los_Angeles', 'day', 0)).toEqual([
      { start: '2026-03-08', end: '2026-03-08' },
    ]);
    expect(localDate(tick, 'Pacific/Kiritimati')).toBe('2026-03-10');
  });

  it('counts lookback in periods for weekly and monthly reports', () => {
    const tick = new Date('2026-03-02T05:00:00Z'); // a Monday: yesterday closed the week
    expect(scheduledWindow(tick, 'UTC', 'week', 1)).toEqual([
      { start: '2026-02-16', end: '2026-02-22' },
      { start: '2026-02-23', end: '2026-03-01' },
    ]);
    const firstOfMonth = new Date('2026-03-01T05:00:00Z');
    expect(scheduledWindow(firstOfMonth, 'UTC', 'month', 1)).toEqual([
      { start: '2026-01-01', end: '2026-01-31' },
      { start: '2026-02-01', end: '2026-02-28' },
    ]);
  });
});

describe('healWindow', () => {
  it('covers the last N days up to yesterday', () => {
    const ps = healWindow(new Date('2026-03-10T12:00:00Z'), 'UTC', 'day', 30);
    expect(ps).toHaveLength(30);
    expect(ps[0]).toEqual({ start: '2026-02-08', end: '2026-02-08' });
    expect(ps.at(-1)).toEqual({ start: '2026-03-09', end: '2026-03-09' });
  });
});

const state = (
  start: string,
  lastStatus: PeriodState['lastStatus'],
  rows: number | null = 5,
): PeriodState => ({
  start,
  end: start,
  lastStatus,
  rows,
  lastLoadedAt: null,
  error: lastStatus === 'failed' ? 'boom' : null,
});

describe('periodsToHeal', () => {
  it('picks periods with no attempt and periods whose last attempt failed', () => {
    const expected = periodsBetween('2026-01-01', '2026-01-05', 'day');
    const states = [
      state('2026-01-01', 'loaded'),
      state('2026-01-02', 'failed'),
      state('2026-01-04', 'superseded'),
      state('2026-01-05', 'loaded', 0),
    ];
    expect(periodsToHeal(expected, states).map((p) => p.start)).toEqual(['2026-01-02', '2026-01-03']);
  });

  it('picks an ended period whose rows are only provisional: it needs its final pull', () => {
    const expected = periodsBetween('2026-01-01', '2026-01-02', 'day');
    const states = [state('2026-01-01', 'loaded'), { ...state('2026-01-02', 'loaded'), provisional: true }];
    expect(periodsToHeal(expected, states).map((p) => p.start)).toEqual(['2026-01-02']);
  });
});

describe('todayPulls', () => {
  const report = (name: string, period: PeriodUnit, timezone: string, startDate?: string): ReportJob => ({
    kind: 'report',
    name,
    dimensions: ['day'],
    period,
    lookbackDays: 0,
    schedule: { cron: '0 3 * * *', timezone },
    ...(startDate === undefined ? {} : { startDate }),
    file: `${name}.yaml`,
  });

  it("is each account's current period of each report in its own time zone, provisional; none before a start", () => {
    // 2026-03-10 02:00 UTC: still 2026-03-09 in Los Angeles, in the week of Monday 2026-03-09.
    const now = new Date('2026-03-10T02:00:00Z');
    const reports = [
      report('utc_day', 'day', 'UTC'),
      report('la_day', 'day', 'America/Los_Angeles'),
      report('la_week', 'week', 'America/Los_Angeles'),
      report('later', 'day', 'UTC', '2026-03-11'),
    ];
    const accounts = [
      { name: 'north', reports: undefined },
      { name: 'south', reports: ['utc_day'] },
    ];
    expect(todayPulls(reports, now, accounts)).toEqual([
      {
        account: 'north',
        report: 'utc_day',
        period: { start: '2026-03-10', end: '2026-03-10' },
        provisional: true,
      },
      {
        account: 'south',
        report: 'utc_day',
        period: { start: '2026-03-10', end: '2026-03-10' },
        provisional: true,
      },
      {
        account: 'north',
        report: 'la_day',
        period: { start: '2026-03-09', end: '2026-03-09' },
        provisional: true,
      },
      {
        account: 'north',
        report: 'la_week',
        period: { start: '2026-03-09', end: '2026-03-15' },
        provisional: true,
      },
    ]);
  });
});

describe('planTick', () => {
  it('keeps the whole window and adds the newest gaps outside it, capped', () => {
    const window = periodsBetween('2026-01-08', '2026-01-09', 'day');
    const watched = periodsBetween('2026-01-01', '2026-01-09', 'day');
    const plan = planTick({ window, watched }, [], 3);
    expect(plan.window.map((p) => p.start)).toEqual(['2026-01-08', '2026-01-09']);
    expect(plan.gaps.map((p) => p.start)).toEqual(['2026-01-07', '2026-01-06', '2026-01-05']);
  });

  it('adds no gaps when the cap is zero', () => {
    const watched = periodsBetween('2026-01-01', '2026-01-02', 'day');
    expect(planTick({ window: [], watched }, [], 0).gaps).toEqual([]);
  });
});

describe('zeroRowOutliers', () => {
  it('flags a loaded zero-row period whose loaded neighbour had rows, not a run of quiet days', () => {
    const states = [
      state('2026-01-01', 'loaded', 10),
      state('2026-01-02', 'loaded', 0),
      state('2026-01-03', 'loaded', 12),
      state('2026-01-10', 'loaded', 0),
      state('2026-01-11', 'loaded', 0),
      state('2026-01-04', 'failed', null),
    ];
    // 2026-01-10 has 2026-01-03 (12 rows) as its nearest loaded neighbour before it.
    expect(zeroRowOutliers(states).map((s) => s.start)).toEqual(['2026-01-02', '2026-01-10']);
    expect(zeroRowOutliers([state('2026-01-01', 'loaded', 0), state('2026-01-02', 'loaded', 0)])).toEqual([]);
  });
});

const job = (name: string, period: PeriodUnit) => ({ name, period }) as unknown as ReportJob;

/** The plan as it was built before it streamed: every period of every report, stably sorted by end. */
function reference(reports: readonly ReportJob[], from: string, to: string, newest: boolean): PlannedPull[] {
  const byReport = reports.flatMap((r) =>
    periodsBetween(from, to, r.period).map((period) => ({ report: r.name, period })),
  );
  if (!newest) return byReport;
  return byReport.sort((a, b) => (a.period.end === b.period.end ? 0 : a.period.end > b.period.end ? -1 : 1));
}

describe('backfillPulls', () => {
  it('gives newest periods first, every report of a period end before the one before', () => {
    const plan = planBackfill([job('a', 'day'), job('b', 'week')], '2026-01-03', '2026-01-05');
    expect(plan.map((p) => `${p.report} ${p.period.start}..${p.period.end}`)).toEqual([
      'b 2026-01-05..2026-01-11',
      'a 2026-01-05..2026-01-05',
      'a 2026-01-04..2026-01-04',
      'b 2025-12-29..2026-01-04',
      'a 2026-01-03..2026-01-03',
    ]);
  });

  it('is, in both orders, the stable sort of every report and period, for any mix of reports and range', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<PeriodUnit>('day', 'week', 'month'), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 120 }),
        fc.boolean(),
        (units, start, len, newest) => {
          const reports = units.map((u, i) => job(`r${i}`, u));
          const from = addDays('1990-01-01', start);
          const to = addDays(from, len);
          const order = newest ? 'newest-first' : 'oldest-first';
          expect([...backfillPulls(reports, from, to, order)]).toEqual(reference(reports, from, to, newest));
          expect(countBackfill(reports, from, to)).toBe(reference(reports, from, to, false).length);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('streams: the first pulls of a plan of a million come without building the rest', () => {
    const reports = Array.from({ length: 100 }, (_, i) => job(`r${i}`, 'day'));
    const pulls = backfillPulls(reports, '1990-01-01', '2017-05-18');
    const first = pulls.next();
    expect(first.value).toEqual({ report: 'r0', period: { start: '2017-05-18', end: '2017-05-18' } });
    expect(pulls.next().value).toEqual({ report: 'r1', period: { start: '2017-05-18', end: '2017-05-18' } });
  });

  it('never steps before --from: a range on the first day of the calendar plans without year 0', () => {
    const plan = planBackfill([job('a', 'day'), job('b', 'month')], '0001-01-01', '0001-01-02');
    expect(plan.map((p) => `${p.report} ${p.period.start}`)).toEqual([
      'b 0001-01-01',
      'a 0001-01-02',
      'a 0001-01-01',
    ]);
  });

  it('refuses an empty range when called, before the first pull', () => {
    expect(() => backfillPulls([job('a', 'day')], '2026-01-02', '2026-01-01')).toThrow(TerminalError);
  });
});

describe('scheduledTime', () => {
  it('is the instant the tick was scheduled for, however late it runs', () => {
    const at = Date.UTC(2026, 0, 10, 3);
    expect(scheduledTime({ data: {}, timestamp: 0, opts: { prevMillis: at } }).getTime()).toBe(at);
    expect(
      scheduledTime({ id: `repeat:adops-report-x:${at}`, data: {}, timestamp: 0, opts: {} }).getTime(),
    ).toBe(at);
    expect(scheduledTime({ id: 'other', data: {}, timestamp: at - 5, delay: 5, opts: {} }).getTime()).toBe(
      at,
    );
  });
});
