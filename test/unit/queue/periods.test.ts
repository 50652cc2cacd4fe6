import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  DateFormatError,
  dayNumber,
  healWindow,
  localDate,
  periodContaining,
  periodsBetween,
  scheduledWindow,
} from '../../../src/queue/periods.js';

describe('periodsBetween', () => {
  it('gives one period per day, both ends included', () => {
    expect(periodsBetween('2026-02-27', '2026-03-02', 'day')).toEqual([
      { start: '2026-02-27', end: '2026-02-27' },
      { start: '2026-02-28', end: '2026-02-28' },
      { start: '2026-03-01', end: '2026-03-01' },
      { start: '2026-03-02', end: '2026-03-02' },
    ]);
  });

  it('gives whole ISO weeks from Monday to Sunday overlapping the range', () => {
    // 2026-01-07 is a Wednesday.
    expect(periodsBetween('2026-01-07', '2026-01-12', 'week')).toEqual([
      { start: '2026-01-05', end: '2026-01-11' },
      { start: '2026-01-12', end: '2026-01-18' },
    ]);
  });

  it('gives whole calendar months, leap February included', () => {
    expect(periodsBetween('2024-01-31', '2024-03-01', 'month')).toEqual([
      { start: '2024-01-01', end: '2024-01-31' },
      { start: '2024-02-01', end: '2024-02-29' },
      { start: '2024-03-01', end: '2024-03-31' },
    ]);
  });

  it('refuses a range whose start is after its end, and non-dates', () => {
    expect(() => periodsBetween('2026-01-02', '2026-01-01', 'day')).toThrow(DateFormatError);
    expect(() => periodsBetween('2026-02-30', '2026-03-01', 'day')).toThrow(/not a calendar date/);
    expect(() => dayNumber('26-1-1')).toThrow(/YYYY-MM-DD/);
  });

  it('tiles the range: periods are contiguous, cover from and to, and never overlap', () => {
    const day = fc.integer({ min: 18_000, max: 22_000 });
    fc.assert(
      fc.property(
        day,
        fc.integer({ min: 0, max: 400 }),
        fc.constantFrom('day', 'week', 'month'),
        (d, len, unit) => {
          const from = addDays('1970-01-01', d);
          const to = addDays(from, len);
          const ps = periodsBetween(from, to, unit as 'day' | 'week' | 'month');
          expect(ps[0]!.start <= from).toBe(true);
          expect(ps.at(-1)!.end >= to).toBe(true);
          for (let i = 1; i < ps.length; i++) expect(ps[i]!.start).toBe(addDays(ps[i - 1]!.end, 1));
          for (const p of ps) expect(periodContaining(p.start, unit as 'day')).toEqual(p);
        },
      ),
    );
  });
});

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
