// Consecutive periods in one request (issue 37): the planning, the job's periods, the split policy
// and the routing of rows by day. Pure: no server.
import { describe, expect, it } from 'vitest';
import { apiHttpError, apiTransportError } from '../../../src/api/errors.js';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { parseJob } from '../../../src/platform/config/jobs.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { periodsBetween } from '../../../src/platform/dates/periods.js';
import { asPullData, pullData, pullDedupId, pullPeriod } from '../../../src/platform/queue/jobs.js';
import {
  backfillPulls,
  inRequests,
  pullLabel,
  requestDays,
  requestPeriods,
  type PlannedPull,
} from '../../../src/plan/pulls.js';
import { routing } from '../../../src/pull/route.js';
import { inSpans, RequestSizes, splittable } from '../../../src/pull/split.js';
import { RowValueError } from '../../../src/pull/encode.js';

const report = (name: string, dimensions: string[], extra: Partial<ReportJob> = {}) =>
  ({
    kind: 'report',
    name,
    dimensions,
    period: 'day',
    lookbackDays: 0,
    schedule: undefined,
    file: 'x',
    ...extra,
  }) as ReportJob;
const zone = report('daily_zone', ['day', 'zone_id']);
const noDay = report('by_zone', ['zone_id']);
const label = (pulls: Iterable<PlannedPull>) => [...pulls].map(pullLabel);

describe('inRequests', () => {
  it('joins consecutive days of a report into requests of at most days_per_request days, newest first', () => {
    const plan = backfillPulls([zone, noDay], '2026-01-01', '2026-01-10');
    expect(label(inRequests(plan, [zone, noDay]))).toEqual([
      'by_zone 2026-01-10',
      'by_zone 2026-01-09',
      'by_zone 2026-01-08',
      'by_zone 2026-01-07',
      'by_zone 2026-01-06',
      'by_zone 2026-01-05',
      // Let go once full: when its oldest day is planned.
      'daily_zone 2026-01-04..2026-01-10',
      'by_zone 2026-01-04',
      'by_zone 2026-01-03',
      'by_zone 2026-01-02',
      'by_zone 2026-01-01',
      'daily_zone 2026-01-01..2026-01-03',
    ]);
  });

  it("takes the job's days_per_request, else the account's, else 7; a gap ends a request", () => {
    const pulls = (days: string[], account = 'default'): PlannedPull[] =>
      days.map((d) => ({ account, report: 'daily_zone', period: { start: d, end: d } }));
    const accounts = [{ name: 'north', reports: undefined, daysPerRequest: 2 }];
    const days = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-05', '2026-01-06'];
    expect(label(inRequests(pulls(days, 'north'), [zone], accounts))).toEqual([
      'north/daily_zone 2026-01-01..2026-01-02',
      'north/daily_zone 2026-01-03',
      'north/daily_zone 2026-01-05..2026-01-06',
    ]);
    expect(label(inRequests(pulls(days), [{ ...zone, daysPerRequest: 3 }], accounts))).toEqual([
      'daily_zone 2026-01-01..2026-01-03',
      'daily_zone 2026-01-05..2026-01-06',
    ]);
    expect(requestDays(zone)).toBe(7);
    expect(requestDays(noDay, { daysPerRequest: 30 })).toBe(1);
  });

  it('keeps apart the accounts and the table versions, and the order of --oldest-first', () => {
    const plan = backfillPulls([zone], '2026-01-01', '2026-01-04', 'oldest-first');
    const both = [...plan].flatMap((p) => [
      { ...p, account: 'a' },
      { ...p, account: 'b', version: 2 },
    ]);
    const out = [...inRequests(both, [zone], [{ name: 'a', reports: undefined, daysPerRequest: 2 }])];
    expect(out.map((p) => `${pullLabel(p)}${p.version === undefined ? '' : ` v${p.version}`}`)).toEqual([
      'a/daily_zone 2026-01-01..2026-01-02',
      'a/daily_zone 2026-01-03..2026-01-04',
      'b/daily_zone 2026-01-01..2026-01-04 v2',
    ]);
  });

  it('joins weeks as whole periods within the days allowed', () => {
    const weekly = report('weekly_zone', ['day', 'zone_id'], { period: 'week', daysPerRequest: 14 });
    const plan = backfillPulls([weekly], '2026-01-05', '2026-02-01', 'oldest-first');
    expect(label(inRequests(plan, [weekly]))).toEqual([
      'weekly_zone 2026-01-05..2026-01-18',
      'weekly_zone 2026-01-19..2026-02-01',
    ]);
  });
});

describe("a pull's periods", () => {
  it('are its first period alone without `until` (a job of 1.0), else every period through `until`', () => {
    const first = { start: '2026-01-01', end: '2026-01-01' };
    expect(requestPeriods(first, undefined, 'day')).toEqual([first]);
    expect(requestPeriods(first, '2026-01-03', 'day')).toEqual(
      periodsBetween('2026-01-01', '2026-01-03', 'day'),
    );
    const week = { start: '2026-01-05', end: '2026-01-11' };
    expect(requestPeriods(week, '2026-01-18', 'week')).toHaveLength(2);
    // The report's period changed since it was planned: no whole periods.
    expect(requestPeriods(week, '2026-01-18', 'day')).toBeUndefined();
    expect(requestPeriods(first, '2026-01-03', 'week')).toBeUndefined();
  });

  it('ride in the job as `until`, checked on reading, and in its dedup id and label', () => {
    const data = pullData(
      'daily_zone',
      { start: '2026-01-01', end: '2026-01-01' },
      undefined,
      'default',
      '2026-01-07',
    );
    expect(asPullData(JSON.parse(JSON.stringify(data)))).toEqual(data);
    expect(pullDedupId(data)).toBe('daily_zone/2026-01-01/2026-01-01/2026-01-07');
    expect(pullLabel({ report: data.report, period: pullPeriod(data) })).toBe(
      'daily_zone 2026-01-01..2026-01-07',
    );
    expect(asPullData({ ...data, until: '2025-12-31' })).toBeUndefined();
    expect(asPullData({ ...data, until: 'soon' })).toBeUndefined();
    const old = { report: 'daily_zone', periodStart: '2026-01-01', periodEnd: '2026-01-01' };
    expect(asPullData(old)).toEqual({ ...old, account: 'default' });
  });
});

describe('days_per_request in a job file', () => {
  it('is a whole number of days, and needs the day dimension unless it is 1', () => {
    const job = (extra: string, dims = '[day, zone_id]') =>
      parseJob(`name: z\ndimensions: ${dims}\nperiod: day\n${extra}`, 'z.yaml');
    expect(job('days_per_request: 14\n')).toMatchObject({ daysPerRequest: 14 });
    expect(job('')).not.toHaveProperty('daysPerRequest');
    expect(job('days_per_request: 1\n', '[zone_id]')).toMatchObject({ daysPerRequest: 1 });
    expect(() => job('days_per_request: 0\n')).toThrow(/days_per_request: 0 is not allowed/);
    expect(() => job('days_per_request: 7\n', '[zone_id]')).toThrow(
      /days_per_request: 7 is not allowed: it needs the day dimension/,
    );
  });
});

describe('splitting', () => {
  const error = (status: number, message: string) =>
    apiHttpError({
      status,
      apiMessage: message,
      method: 'GET',
      path: '/reports',
      attempts: 1,
      hint: '',
      retryable: false,
    });
  it('splits on what a shorter request may pass, never on what it cannot mend', () => {
    expect(splittable(error(400, 'A report may span at most 3 days per request.'))).toBe(true);
    expect(splittable(error(400, 'date_until is too far from date_from'))).toBe(true);
    expect(splittable(error(413, 'Payload Too Large'))).toBe(true);
    expect(splittable(error(503, 'busy'))).toBe(true);
    expect(splittable(new Error('loading failed: body larger than 5 bytes (ADOPS_MAX_BODY_MB=1)'))).toBe(
      true,
    );
    const timeout = { method: 'GET', path: '/reports', attempts: 5, hint: '', retryable: true };
    expect(splittable(apiTransportError({ ...timeout, code: 'UND_ERR_HEADERS_TIMEOUT', detail: 'x' }))).toBe(
      true,
    );
    expect(splittable(apiTransportError({ ...timeout, code: 'ECONNREFUSED', detail: 'x' }))).toBe(false);
    expect(splittable(error(400, 'Unknown dimension "days".'))).toBe(false);
    expect(splittable(error(401, 'API key invalid'))).toBe(false);
    expect(splittable(error(403, 'This API key lacks the scope "reports".'))).toBe(false);
    expect(splittable(error(404, 'not found'))).toBe(false);
  });

  it('remembers the longest request that worked below the shortest that failed', () => {
    const sizes = new RequestSizes();
    expect(sizes.start('a/r')).toBe(Infinity);
    sizes.succeeded('a/r', 7); // nothing failed yet: nothing to remember
    expect(sizes.start('a/r')).toBe(Infinity);
    sizes.split('a/r', 7);
    sizes.split('a/r', 4);
    sizes.succeeded('a/r', 2);
    sizes.succeeded('a/r', 3);
    sizes.succeeded('a/r', 2);
    expect([sizes.start('a/r'), sizes.start('b/r')]).toEqual([3, Infinity]);
    sizes.split('a/r', 3); // the server got stricter
    expect(sizes.start('a/r')).toBe(Infinity);
    const days = periodsBetween('2026-01-01', '2026-01-07', 'day');
    expect(inSpans(days, 3).map((r) => r.length)).toEqual([3, 3, 1]);
    expect(inSpans(days, Infinity).map((r) => r.length)).toEqual([7]);
  });
});

describe('routing rows by day', () => {
  const row = (day: string, n = 1) => ({ dims: [day, '5'], counters: [n, n, n, n, n] });
  it('sends each row to its period, counting and summing there; skipped periods are counted, not kept', () => {
    const periods = periodsBetween('2026-01-01', '2026-01-03', 'day');
    const r = routing({ start: '2026-01-01', end: '2026-01-03' }, periods, ['day', 'zone_id']);
    if (r === undefined) throw new Error('expected a routing');
    const skip = [false, true, false];
    expect(
      [row('2026-01-03', 2), row('2026-01-02'), row('2026-01-01', 4)].map((x) => r.place(x, skip)),
    ).toEqual([2, -1, 0]);
    expect([r.rows(0), r.rows(1), r.rows(2)]).toEqual([1, 1, 1]);
    expect(r.totals(2)).toMatchObject({ impressions: 2 });
    expect(() => r.place(row(addDays('2026-01-03', 1)), skip)).toThrow(RowValueError);
  });

  it('is none for a request of its one period; a replay of one period of a request keeps that one', () => {
    const day = { start: '2026-01-02', end: '2026-01-02' };
    expect(routing(day, [day], ['day'])).toBeUndefined();
    const r = routing({ start: '2026-01-01', end: '2026-01-03' }, [day], ['day', 'zone_id']);
    expect([row('2026-01-01'), row('2026-01-02')].map((x) => r?.place(x, [false]))).toEqual([-1, 0]);
    expect(() => routing({ start: '2026-01-01', end: '2026-01-03' }, [day], ['zone_id'])).toThrow(/no day/);
  });
});
