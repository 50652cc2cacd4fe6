import { describe, expect, it } from 'vitest';
import { localDate } from '../../../src/dates/calendar.js';
import { healWindow, scheduledWindow } from '../../../src/plan/windows.js';

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
