// Where a report's plans begin and end: never before its start date (the later of the report's and
// its account's `start_date`), never at a period that has not ended in the report's time zone. Pure:
// the clock comes in as `now`. Backfill, heal, the scheduler tick, status and the pull itself ask here.
import type { ReportJob } from '../config/jobs.js';
import { addDays, localDate } from '../dates/calendar.js';
import type { Period } from '../dates/periods.js';

/** The time zone a report's periods are days of: its schedule's, else UTC. */
export function reportTimezone(report: Pick<ReportJob, 'schedule'>): string {
  return report.schedule?.timezone ?? 'UTC';
}

/** True when `period`'s last day is over in `timezone` at `now`: its data can be final. */
export function hasEnded(period: Pick<Period, 'end'>, timezone: string, now: Date): boolean {
  return period.end < localDate(now, timezone);
}

/** The first day on which `period` has ended: the day after its last. */
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
  const zones = new Map(reports.map((r) => [r.name, reportTimezone(r)]));
  for (const p of pulls) if (hasEnded(p.period, zones.get(p.report) ?? 'UTC', now)) yield p;
}
