// Freshness: how old a report's newest data may get before it counts as late. Pure: the clock is `now`.
import { CronExpressionParser } from 'cron-parser';
import type { ReportJob } from '../platform/config/jobs.js';
import { addDays, startOfLocalDate } from '../platform/dates/calendar.js';
import type { Period, PeriodUnit } from '../platform/dates/periods.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** A fixed instant to measure cron intervals from, so the default does not move with the clock. */
const CRON_REFERENCE = new Date('2026-01-05T00:00:00Z');

type FreshnessOf = Pick<ReportJob, 'period' | 'schedule' | 'freshnessMs'>;

/** A report's freshness limit: its `freshness`, else its period's length plus its schedule's longest
 * interval, so a daily report ticking nightly is late at 48 h, once a whole run was missed. */
export function freshnessLimitMs(report: FreshnessOf): number {
  if (report.freshnessMs !== undefined) return report.freshnessMs;
  return PERIOD_DAYS[report.period] * DAY_MS + scheduleIntervalMs(report.schedule);
}

const PERIOD_DAYS: Readonly<Record<PeriodUnit, number>> = { day: 1, week: 7, month: 31 };

/** The longest gap between two consecutive runs of `schedule` (over its next runs), capped at 31 days.
 * Walking the runs costs milliseconds: callers work out a report's limit once, not once a period. */
export function scheduleIntervalMs(schedule: ReportJob['schedule']): number {
  if (schedule === undefined) return DAY_MS;
  const runs = CronExpressionParser.parse(schedule.cron, {
    tz: schedule.timezone,
    currentDate: CRON_REFERENCE,
    strict: false,
  }).take(32);
  let longest = 0;
  for (let i = 1; i < runs.length; i++) {
    const gap = (runs[i]?.getTime() ?? 0) - (runs[i - 1]?.getTime() ?? 0);
    longest = Math.max(longest, gap);
  }
  return Math.min(longest || DAY_MS, 31 * DAY_MS);
}

export function periodEndInstant(period: Pick<Period, 'end'>, timezone: string): Date {
  return startOfLocalDate(addDays(period.end, 1), timezone);
}

/** `ageMs`: of the newest loaded data (null: none). */
interface Freshness {
  readonly limitMs: number;
  readonly ageMs: number | null;
  readonly late: boolean;
}

export function freshnessOf(
  report: FreshnessOf,
  newest: Pick<Period, 'end'> | undefined,
  now: Date,
): Freshness {
  const limitMs = freshnessLimitMs(report);
  if (newest === undefined) return { limitMs, ageMs: null, late: true };
  const ageMs = now.getTime() - periodEndInstant(newest, report.schedule?.timezone ?? 'UTC').getTime();
  return { limitMs, ageMs, late: ageMs > limitMs };
}

/** True when a period's data ended longer ago than `limitMs`: it should be loaded by now. */
export function isDue(
  report: FreshnessOf,
  period: Pick<Period, 'end'>,
  now: Date,
  limitMs = freshnessLimitMs(report),
): boolean {
  const end = periodEndInstant(period, report.schedule?.timezone ?? 'UTC');
  return now.getTime() - end.getTime() > limitMs;
}
