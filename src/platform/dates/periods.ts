// Periods: the calendar slices one pull covers (a day, an ISO week, a month).
import { TerminalError } from '../retry/errors.js';
import { addDays, daysInMonth, digits, isoWeekday, parseIsoDate } from './calendar.js';

/** The period kinds a job definition may declare. */
export const PERIOD_UNITS = ['day', 'week', 'month'] as const;
export type PeriodUnit = (typeof PERIOD_UNITS)[number];

/** Days of the longest period: a period overlapping a day starts less than this before it. */
export const LONGEST_PERIOD_DAYS = 31;

/** A date range, both ends inclusive, as YYYY-MM-DD strings (the API's date_from and date_until). */
export interface Period {
  readonly start: string;
  readonly end: string;
}

/** True when `value` names a period kind; the run-time check behind the PeriodUnit type. */
export function isPeriodUnit(value: unknown): value is PeriodUnit {
  return typeof value === 'string' && (PERIOD_UNITS as readonly string[]).includes(value);
}

/** Compile-time proof that a switch covers every case; throws if a value slips through at run time. */
export function unreachable(value: never, what: string): never {
  throw new TerminalError(
    `unknown ${what} ${JSON.stringify(value)}: expected one of ${PERIOD_UNITS.join(', ')}`,
  );
}

/** The period of `unit` containing `date`: the day, its ISO week (Monday to Sunday) or its month. */
export function periodContaining(date: string, unit: PeriodUnit): Period {
  switch (unit) {
    case 'day':
      parseIsoDate(date);
      return { start: date, end: date };
    case 'week': {
      const start = addDays(date, -isoWeekday(date));
      return { start, end: addDays(start, 6) };
    }
    case 'month': {
      parseIsoDate(date);
      const month = date.slice(0, 7);
      const last = daysInMonth(digits(date, 0, 4), digits(date, 5, 7));
      return { start: `${month}-01`, end: `${month}-${String(last).padStart(2, '0')}` };
    }
    default:
      return unreachable(unit, 'period kind');
  }
}

/** The period right after `period` (periods of one unit tile the calendar). */
export function nextPeriod(period: Period, unit: PeriodUnit): Period {
  return periodContaining(addDays(period.end, 1), unit);
}

export function previousPeriod(period: Period, unit: PeriodUnit): Period {
  return periodContaining(addDays(period.start, -1), unit);
}

/** Every whole period of `unit` overlapping from..to (both inclusive), oldest first. */
export function periodsBetween(from: string, to: string, unit: PeriodUnit): Period[] {
  if (parseIsoDate(from) > parseIsoDate(to))
    throw new TerminalError(`the range ${from}..${to} is empty: --from must not be after --to`);
  const out: Period[] = [];
  for (let p = periodContaining(from, unit); p.start <= to; p = nextPeriod(p, unit)) out.push(p);
  return out;
}

export function periodKey(period: Period): string {
  return `${period.start}/${period.end}`;
}
