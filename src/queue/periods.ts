// Date slicing for pulls: pure functions over YYYY-MM-DD strings, computed in UTC arithmetic so the
// host's time zone never shifts a day. Time zones enter only where a clock instant becomes a date.
import type { PeriodUnit } from '../config/jobs.js';
import type { Period } from '../report/types.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** Thrown for a string that is not a real calendar date in YYYY-MM-DD form. */
export class DateFormatError extends Error {
  override readonly name = 'DateFormatError';
}

/** Days since 1970-01-01 of a YYYY-MM-DD date; throws DateFormatError for anything else. */
export function dayNumber(date: string): number {
  const m = DATE.exec(date);
  if (m === null) throw new DateFormatError(`"${date}" is not a date: expected YYYY-MM-DD`);
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (formatDay(ms / DAY_MS) !== date)
    throw new DateFormatError(`"${date}" is not a calendar date: expected YYYY-MM-DD`);
  return ms / DAY_MS;
}

/** YYYY-MM-DD of a day number. */
export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** `date` moved by `days` (negative goes back). */
export function addDays(date: string, days: number): string {
  return formatDay(dayNumber(date) + days);
}

/** The period of `unit` that contains `date`: a day, an ISO week (Monday to Sunday) or a month. */
export function periodContaining(date: string, unit: PeriodUnit): Period {
  const day = dayNumber(date);
  if (unit === 'day') return { start: date, end: date };
  if (unit === 'week') {
    // 1970-01-01 was a Thursday: shift so Monday is 0.
    const monday = day - ((day + 3) % 7);
    return { start: formatDay(monday), end: formatDay(monday + 6) };
  }
  const [y, m] = date.split('-').map(Number) as [number, number];
  const first = Date.UTC(y, m - 1, 1) / DAY_MS;
  const last = Date.UTC(y, m, 1) / DAY_MS - 1;
  return { start: formatDay(first), end: formatDay(last) };
}

/** The period right after `period` (periods of one unit tile the calendar). */
function nextPeriod(period: Period, unit: PeriodUnit): Period {
  return periodContaining(addDays(period.end, 1), unit);
}

/** The period right before `period`. */
function previousPeriod(period: Period, unit: PeriodUnit): Period {
  return periodContaining(addDays(period.start, -1), unit);
}

/**
 * Every period of `unit` that overlaps from..to (both inclusive), oldest first. Periods are whole:
 * a week range starting on a Wednesday begins with that week's Monday.
 */
export function periodsBetween(from: string, to: string, unit: PeriodUnit): Period[] {
  if (dayNumber(from) > dayNumber(to))
    throw new DateFormatError(`the range ${from}..${to} is empty: --from must not be after --to`);
  const out: Period[] = [];
  for (let p = periodContaining(from, unit); p.start <= to; p = nextPeriod(p, unit)) out.push(p);
  return out;
}

/** The calendar date of instant `at` in IANA time zone `timezone`. */
export function localDate(at: Date, timezone: string): string {
  // en-CA formats as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

/**
 * The periods a scheduler tick pulls: the period holding "yesterday" (in `timezone`, as of the
 * tick's scheduled instant, not whenever a worker gets to it) and the `lookback` periods before it,
 * which are pulled again for late data. Oldest first; lookback + 1 periods.
 */
export function scheduledWindow(tick: Date, timezone: string, unit: PeriodUnit, lookback: number): Period[] {
  let p = periodContaining(addDays(localDate(tick, timezone), -1), unit);
  const out: Period[] = [p];
  for (let i = 0; i < lookback; i++) {
    p = previousPeriod(p, unit);
    out.unshift(p);
  }
  return out;
}

/**
 * The periods heal and the scheduler's gap repair watch: every period overlapping the last `days`
 * days before today (in `timezone`), up to and including yesterday's. Oldest first.
 */
export function healWindow(now: Date, timezone: string, unit: PeriodUnit, days: number): Period[] {
  const today = localDate(now, timezone);
  return periodsBetween(addDays(today, -Math.max(1, days)), addDays(today, -1), unit);
}

/** A stable key of a period, for maps and sets. */
export function periodKey(period: Period): string {
  return `${period.start}/${period.end}`;
}
