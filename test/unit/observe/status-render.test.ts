import { describe, expect, it } from 'vitest';
import { foldDates, renderStatus } from '../../../src/status/render.js';
import type { Status } from '../../../src/status/status.js';

describe('foldDates', () => {
  it('folds consecutive days into ranges', () => {
    expect(
      foldDates(['2026-01-03', '2026-01-01', '2026-01-02', '2026-01-07', '2026-02-28', '2026-03-01']),
    ).toEqual(['2026-01-01..2026-01-03', '2026-01-07', '2026-02-28..2026-03-01']);
  });
});

describe('renderStatus', () => {
  const status: Status = {
    generatedAt: '2026-01-05T00:00:00.000Z',
    days: 4,
    gridDays: ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04'],
    reports: [
      {
        account: 'default',
        report: 'daily_zone',
        period: 'day',
        lastLoaded: '2026-01-04',
        expected: 4,
        loaded: 2,
        missing: ['2026-01-02'],
        failed: [{ period: '2026-01-03', error: 'ApiHttpError: HTTP 401; check ADOPS_API_KEY' }],
        unreconciled: [],
        zeroRows: ['2026-01-04'],
        cells: ['loaded', 'missing', 'failed', 'zero'],
        freshness: { limitHours: 48, ageHours: 24, late: false },
        overdue: ['2026-01-02'],
      },
    ],
    restatements: [],
    queues: { 'report-pulls': { waiting: 1, active: 2, delayed: 3, failed: 4, completed: 5 } },
  };

  it('shows the counts, each problem with its reason, queue counts and one grid cell per day', () => {
    const text = renderStatus(status);
    expect(text).toMatch(/daily_zone\s+2026-01-04\s+2\/4\s+1\s+1\s+0\s+1/);
    expect(text).toContain('daily_zone: missing 2026-01-02');
    expect(text).toContain('daily_zone 2026-01-03: failed: ApiHttpError: HTTP 401; check ADOPS_API_KEY');
    expect(text).toContain('zero rows while neighbours had rows: 2026-01-04');
    expect(text).toContain('report-pulls  waiting 1, active 2, delayed 3, failed 4');
    expect(text).toMatch(/daily_zone\s+█·✗○\n/);
  });

  it('shows today apart (rows, last refresh) and an ended period still provisional, marked ~ in the grid', () => {
    const [report] = status.reports;
    const text = renderStatus({
      ...status,
      reports: [
        {
          ...report!,
          cells: ['loaded', 'missing', 'failed', 'provisional'],
          provisional: ['2026-01-04'],
          today: { period: '2026-01-05', rows: 120, refreshedAt: '2026-01-05T09:30:00.000Z' },
        },
      ],
    });
    expect(text).toContain(
      "Today, provisional (each pull replaces the last; final once a pull after the period's end loads it):\n" +
        '  daily_zone 2026-01-05: 120 rows, refreshed 2026-01-05T09:30:00.000Z\n' +
        '  daily_zone 2026-01-04: ended, provisional until its final pull\n',
    );
    expect(text).toMatch(/daily_zone\s+█·✗~\n/);
    expect(text).toContain('  ~ provisional');
  });

  it("shows a failed load's stored error with its control characters escaped, as it may quote the API", () => {
    const [report] = status.reports;
    const text = renderStatus({
      ...status,
      reports: [
        {
          ...report!,
          failed: [{ period: '2026-01-03', error: 'HTTP 400: bad \u009b2J \u202eevil\nsecond \u001b[1m' }],
        },
      ],
    });
    // eslint-disable-next-line no-control-regex -- control characters are what must not get through
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(text).toContain(
      'daily_zone 2026-01-03: failed: HTTP 400: bad \\x9b2J \\u202eevil\\nsecond \\x1b[1m\n',
    );
  });

  it('says why each unreconciled period is so: no totals, partial totals, or a mismatch', () => {
    const [report] = status.reports;
    const text = renderStatus({
      ...status,
      reports: [
        {
          ...report!,
          unreconciled: [
            { period: '2026-01-01', reason: 'no totals', mismatch: null },
            { period: '2026-01-02', reason: 'partial totals', mismatch: [] },
            {
              period: '2026-01-04',
              reason: 'mismatch',
              mismatch: [{ counter: 'impressions', items: 1, totals: 2 }],
            },
          ],
        },
      ],
    });
    expect(text).toMatch(/daily_zone\s+2026-01-04\s+2\/4\s+1\s+1\s+3\s+1/);
    expect(text).toContain(
      'daily_zone 2026-01-01: no totals: the API sent none, so the rows are loaded unchecked',
    );
    expect(text).toContain('daily_zone 2026-01-02: partial totals: the API left some counters out');
    expect(text).toContain('daily_zone 2026-01-04: rows do not add up to totals: [{"counter":"impressions"');
  });

  it('says when the queues could not be read', () => {
    expect(renderStatus({ ...status, queues: null, queueError: 'Redis not reachable' })).toContain(
      'unavailable: Redis not reachable',
    );
  });
});
