import { describe, expect, it } from 'vitest';
import { foldDates, renderStatus } from '../../../src/queue/status-render.js';
import type { Status } from '../../../src/queue/status.js';
import { scheduledTime } from '../../../src/queue/tick.js';

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

  it('says when the queues could not be read', () => {
    expect(renderStatus({ ...status, queues: null, queueError: 'Redis not reachable' })).toContain(
      'unavailable: Redis not reachable',
    );
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
