import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  daysBetween,
  isIsoDate,
  localDate,
  parseIsoDate,
  parsePlanDate,
  PLAN_DATES,
} from '../../../src/platform/dates/calendar.js';
import { TerminalError } from '../../../src/platform/retry/errors.js';
import { periodContaining, type PeriodUnit } from '../../../src/platform/dates/periods.js';

describe('calendar dates', () => {
  it('accepts real dates only, leap days included', () => {
    expect(isIsoDate('2024-02-29')).toBe(true);
    expect(isIsoDate('2000-02-29')).toBe(true);
    for (const bad of [
      '2023-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '0000-01-01',
      '2026-1-01',
      '2026-01-01 ',
    ])
      expect(isIsoDate(bad), bad).toBe(false);
  });

  it('agrees with the JavaScript calendar on every day of four centuries', () => {
    fc.assert(
      fc.property(fc.integer({ min: -60_000, max: 90_000 }), (n) => {
        const iso = new Date(n * 86_400_000).toISOString().slice(0, 10);
        expect(isIsoDate(iso)).toBe(true);
        expect(addDays(iso, 1)).toBe(new Date((n + 1) * 86_400_000).toISOString().slice(0, 10));
      }),
    );
  });

  it('names what was wrong: the field, the value and the form expected', () => {
    expect(() => parseIsoDate('2026-02-30', '--from')).toThrow(
      '--from: "2026-02-30" is not a calendar date: expected YYYY-MM-DD',
    );
    expect(() => parseIsoDate('yesterday', '--to')).toThrow(TerminalError);
  });

  it('plans only dates from 1970-01-01 to 2999-12-31, refusing others in one line naming the range', () => {
    expect(PLAN_DATES).toEqual({ first: '1970-01-01', last: '2999-12-31' });
    expect(parsePlanDate('1970-01-01', '--from')).toBe('1970-01-01');
    expect(parsePlanDate('2999-12-31', '--to')).toBe('2999-12-31');
    for (const far of ['0001-01-01', '1969-12-31', '3000-01-01', '9999-12-31'])
      expect(() => parsePlanDate(far, '--from'), far).toThrow(
        new TerminalError(`--from: ${far} is outside the dates adops plans, 1970-01-01 to 2999-12-31`),
      );
    expect(() => parsePlanDate('2026-02-30', '--to')).toThrow('is not a calendar date');
  });

  it('steps days across months, years and daylight-saving changes', () => {
    expect(addDays('2026-03-28', 2)).toBe('2026-03-30');
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(daysBetween('2026-01-01', '2026-12-31')).toBe(364);
    expect(daysBetween('2026-01-02', '2026-01-01')).toBe(-1);
  });

  it('reads the local date of an instant in a time zone', () => {
    const at = new Date('2026-03-10T00:30:00Z');
    expect(localDate(at, 'UTC')).toBe('2026-03-10');
    expect(localDate(at, 'America/New_York')).toBe('2026-03-09');
    expect(localDate(at, 'Asia/Tokyo')).toBe('2026-03-10');
    // UTC takes a shorter road: the same day at every instant, up to the last millisecond of one.
    for (const iso of ['1970-01-01T00:00:00.000Z', '2026-03-09T23:59:59.999Z', '9999-12-31T23:59:59.999Z'])
      expect(localDate(new Date(iso), 'UTC')).toBe(iso.slice(0, 10));
    expect(localDate(new Date('1969-12-31T23:59:59.999Z'), 'UTC')).toBe('1969-12-31');
  });
});

describe('periods', () => {
  it('refuses an unknown period kind at run time, naming the kinds allowed', () => {
    expect(() => periodContaining('2026-01-01', 'quarter' as PeriodUnit)).toThrow(
      'unknown period kind "quarter": expected one of day, week, month',
    );
  });
});
