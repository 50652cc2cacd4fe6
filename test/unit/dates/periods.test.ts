import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tz } from '@date-fns/tz';
import {
  addDays as addDaysFns,
  endOfISOWeek,
  endOfMonth,
  format,
  startOfISOWeek,
  startOfMonth,
} from 'date-fns';
import { addDays, daysBetween, parseIsoDate } from '../../../src/platform/dates/calendar.js';
import { TerminalError } from '../../../src/platform/retry/errors.js';
import {
  LONGEST_PERIOD_DAYS,
  periodContaining,
  periodsBetween,
} from '../../../src/platform/dates/periods.js';

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
    expect(() => periodsBetween('2026-01-02', '2026-01-01', 'day')).toThrow(TerminalError);
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

describe('day arithmetic without date-fns', () => {
  const UTC = tz('UTC');
  const fns = (d: string) => UTC(`${d}T00:00:00Z`);
  const iso = (d: Date) => format(d, 'yyyy-MM-dd', { in: UTC });

  it('addDays and periodContaining agree with date-fns in UTC, from year 1 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3_650_000 }), fc.integer({ min: -400, max: 400 }), (n, step) => {
        const d = iso(addDaysFns(fns('0001-01-01'), n, { in: UTC }));
        fc.pre(d <= '9998-12-31' && d >= '0002-01-01');
        expect(addDays(d, step)).toBe(iso(addDaysFns(fns(d), step, { in: UTC })));
        expect(periodContaining(d, 'week')).toEqual({
          start: iso(startOfISOWeek(fns(d), { in: UTC })),
          end: iso(endOfISOWeek(fns(d), { in: UTC })),
        });
        expect(periodContaining(d, 'month')).toEqual({
          start: iso(startOfMonth(fns(d), { in: UTC })),
          end: iso(endOfMonth(fns(d), { in: UTC })),
        });
      }),
      { numRuns: 300 },
    );
  });

  it('no period is longer than LONGEST_PERIOD_DAYS, the bound of the window queries', () => {
    for (let d = '2023-12-25'; d <= '2025-01-05'; d = addDays(d, 1))
      for (const unit of ['day', 'week', 'month'] as const) {
        const p = periodContaining(d, unit);
        expect(daysBetween(p.start, p.end) + 1).toBeLessThanOrEqual(LONGEST_PERIOD_DAYS);
      }
    expect(periodContaining('2024-01-31', 'month')).toEqual({ start: '2024-01-01', end: '2024-01-31' });
  });
});
