// Calendar dates as YYYY-MM-DD, stepped in UTC so the host's zone never shifts a day: parsed only here.
import { tz, TZDate } from '@date-fns/tz';
// One subpath per function: the 'date-fns' index loads every one of its ~250 modules (0.4 s of start-up).
import { format } from 'date-fns/format';

import { TerminalError } from '../retry/errors.js';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** True for a real YYYY-MM-DD date; no Date allocated, as it runs once per report row. */
export function isIsoDate(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 7);
  const day = digits(s, 8, 10);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

/** The number formed by the decimal digits s[from, to), or -1 if any is not a digit. */
export function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** `s` when it is a real YYYY-MM-DD date; a TerminalError naming `what` (a flag, a field) otherwise. */
export function parseIsoDate(s: string, what = 'date'): string {
  if (isIsoDate(s)) return s;
  const shape = /^\d{4}-\d{2}-\d{2}$/.test(s) ? 'is not a calendar date' : 'is not a date';
  throw new TerminalError(`${what}: ${JSON.stringify(s)} ${shape}: expected YYYY-MM-DD`);
}

/** The dates a plan may name (--from, --to, `start_date`): the UNIX epoch to 2999-12-31, so every period and
 * its neighbours are real dates (0001-01-01's previous day is year 0). */
export const PLAN_DATES = Object.freeze({ first: '1970-01-01', last: '2999-12-31' });

/** parseIsoDate, and within PLAN_DATES; a TerminalError naming `what`, the date and the range otherwise. */
export function parsePlanDate(s: string, what = 'date'): string {
  const date = parseIsoDate(s, what);
  if (date < PLAN_DATES.first || date > PLAN_DATES.last)
    throw new TerminalError(`${what}: ${outsidePlan(date)}`);
  return date;
}

/** What is wrong with a `start_date` (short, quotable), or undefined when parsePlanDate takes it. */
export function planDateProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') {
    const shown = JSON.stringify(value) ?? String(value);
    return `${shown.length > 24 ? `${shown.slice(0, 21)}...` : shown} is not a date: expected YYYY-MM-DD, e.g. 2025-01-01`;
  }
  if (!isIsoDate(value)) {
    const shape = /^\d{4}-\d{2}-\d{2}$/.test(value) ? 'is not a calendar date' : 'is not a date';
    const shown = JSON.stringify(value.length > 24 ? `${value.slice(0, 21)}...` : value);
    return `${shown} ${shape}: expected YYYY-MM-DD, e.g. 2025-01-01`;
  }
  return value < PLAN_DATES.first || value > PLAN_DATES.last ? outsidePlan(value) : undefined;
}

function outsidePlan(date: string): string {
  return `${date} is outside the dates adops plans, ${PLAN_DATES.first} to ${PLAN_DATES.last}`;
}

/** `date` moved by `days`: plain UTC arithmetic, as a big backfill's plan steps 100,000 days. */
export function addDays(date: string, days: number): string {
  return isoDay(utcDay(date, days));
}

/** Days of month `month` (1 to 12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

/** Day of the week of a real YYYY-MM-DD date, Monday 0 to Sunday 6 (ISO order). */
export function isoWeekday(date: string): number {
  return (utcDay(date).getUTCDay() + 6) % 7;
}

/** UTC midnight of a real YYYY-MM-DD date moved by `days` (plain UTC: no time zone shifts a day). */
function utcDay(date: string, days = 0): Date {
  parseIsoDate(date);
  const t = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  t.setUTCFullYear(digits(date, 0, 4), digits(date, 5, 7) - 1, digits(date, 8, 10) + days);
  return t;
}

function isoDay(t: Date): string {
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1, 2)}-${pad(t.getUTCDate(), 2)}`;
}

/** Calendar days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((utcDay(to).getTime() - utcDay(from).getTime()) / 86_400_000);
}

/** 10000-01-01T00:00:00Z: before it, toISOString's date is YYYY-MM-DD. */
const UTC_YEAR_10000_MS = 253_402_300_800_000;

/** The calendar date of instant `at` in IANA time zone `timezone`. */
export function localDate(at: Date, timezone: string): string {
  // UTC, most reports' zone, without the formatter: a pull asks once whether its period has ended.
  const t = at.getTime();
  if (timezone === 'UTC' && t >= 0 && t < UTC_YEAR_10000_MS) return at.toISOString().slice(0, 10);
  return format(at, 'yyyy-MM-dd', { in: tz(timezone) });
}

/** The instant local `date` begins (its midnight) in IANA time zone `timezone`. */
export function startOfLocalDate(date: string, timezone: string): Date {
  parseIsoDate(date);
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(+new TZDate(y, m - 1, d, timezone));
}

export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone.length > 0;
  } catch {
    return false;
  }
}
