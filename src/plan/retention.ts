// Which history a report keeps: month arithmetic over `retention_months`, shared by src/schema/partitions.ts,
// heal, the scheduler tick and `adops status`.
import type { ReportJob } from '../platform/config/jobs.js';
import { localDate } from '../platform/dates/calendar.js';
import type { Period } from '../platform/dates/periods.js';

export function monthStart(date: string): string {
  return `${date.slice(0, 7)}-01`;
}

/** The first day of the month `months` months after (or before, when negative) that of `date`. */
export function addMonths(date: string, months: number): string {
  const index = Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1 + months;
  const year = Math.floor(index / 12);
  const month = index - year * 12 + 1;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-01`;
}

/** The first day of the oldest month kept as of `now` (UTC; undefined: all): a month goes once all of it is
 * older than `retention_months` (12 on 2026-11-23: 2025-10 goes, 2025-11 stays). */
export function retentionBoundary(report: Pick<ReportJob, 'retentionMonths'>, now: Date): string | undefined {
  if (report.retentionMonths === undefined) return undefined;
  return addMonths(localDate(now, 'UTC'), -report.retentionMonths);
}

/** True when `period` starts before the boundary: its rows were (or will be) dropped by retention. */
export function droppedByRetention(period: Pick<Period, 'start'>, boundary: string | undefined): boolean {
  return boundary !== undefined && period.start < boundary;
}

export function retained<P extends Pick<Period, 'start'>>(
  report: Pick<ReportJob, 'retentionMonths'>,
  periods: readonly P[],
  now: Date,
): P[] {
  const boundary = retentionBoundary(report, now);
  return periods.filter((p) => !droppedByRetention(p, boundary));
}
