import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, DateFormatError, parseIsoDate } from '../../../src/dates/calendar.js';
import { periodContaining, periodsBetween } from '../../../src/dates/periods.js';

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
    expect(() => parseIsoDate('26-1-1')).toThrow(/YYYY-MM-DD/);
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
