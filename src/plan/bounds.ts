// Where a report's plans begin and end: never before the later of the report's and its account's
// `start_date`, never at a period not ended in the report's time zone. Pure: the clock comes in as `now`.
import type { ReportJob } from '../platform/config/jobs.js';
import { addDays, localDate } from '../platform/dates/calendar.js';
import type { Period } from '../platform/dates/periods.js';

export function reportTimezone(report: Pick<ReportJob, 'schedule'>): string {
  return report.schedule?.timezone ?? 'UTC';
}

/** True when `period`'s last day is over in `timezone` at `now`: its data can be final. */
export function hasEnded(period: Pick<Period, 'end'>, timezone: string, now: Date): boolean {
  return period.end < localDate(now, timezone);
}

export function endedFrom(period: Pick<Period, 'end'>): string {
  return addDays(period.end, 1);
}

/** The report whose day ends last begins its today first: the one of `reports` with the earliest today at
 * `now`, and that day (undefined for no reports). A backfill may reach the day before it. */
export function earliestToday(
  reports: readonly Pick<ReportJob, 'name' | 'schedule'>[],
  now: Date,
): { readonly report: string; readonly timezone: string; readonly today: string } | undefined {
  let found: { report: string; timezone: string; today: string } | undefined;
  for (const r of reports) {
    const timezone = reportTimezone(r);
    const today = localDate(now, timezone);
    if (found === undefined || today < found.today) found = { report: r.name, timezone, today };
  }
  return found;
}

/** The pulls of `pulls` whose period has ended in its report's time zone at `now`, lazily. */
export function* endedOnly<P extends { readonly report: string; readonly period: Period }>(
  pulls: Iterable<P>,
  reports: readonly Pick<ReportJob, 'name' | 'schedule'>[],
  now: Date,
): Generator<P> {
  // Each report's today once: a time zone's date costs microseconds, and a plan may hold 100,000 pulls.
  const todays = new Map(reports.map((r) => [r.name, localDate(now, reportTimezone(r))]));
  for (const p of pulls) if (p.period.end < (todays.get(p.report) ?? localDate(now, 'UTC'))) yield p;
}

/** A report definition or an account. */
interface StartDated {
  readonly startDate?: string | undefined;
}

/** Where `report`'s plans for `account` begin: the later of their start dates (undefined: none). */
export function startOf(report: StartDated, account: StartDated | undefined): string | undefined {
  const a = report.startDate;
  const b = account?.startDate;
  if (a === undefined) return b;
  return b === undefined || a > b ? a : b;
}

/** True when `period` ends before `start`: nothing of it is pulled, healed or called missing. */
export function beforeStart(period: Pick<Period, 'end'>, start: string | undefined): boolean {
  return start !== undefined && period.end < start;
}

/** The periods ending on or after `start` (the one holding it stays whole). */
export function fromStart<P extends Pick<Period, 'end'>>(
  periods: readonly P[],
  start: string | undefined,
): P[] {
  return periods.filter((p) => !beforeStart(p, start));
}

/** The pulls of `pulls` that do not end before their report's start for `account`, lazily. */
export function* startedOnly<P extends { readonly report: string; readonly period: Period }>(
  pulls: Iterable<P>,
  reports: readonly (Pick<ReportJob, 'name'> & StartDated)[],
  account: StartDated | undefined,
): Generator<P> {
  const starts = new Map(reports.map((r) => [r.name, startOf(r, account)]));
  for (const p of pulls) if (!beforeStart(p.period, starts.get(p.report))) yield p;
}
