// What a backfill pulls: pure, so the plan can be printed (--dry-run) and tested without Redis.
// The plan is a generator: a backfill of years of many reports is enqueued chunk by chunk without
// ever holding all its pulls.
import type { ReportJob } from '../config/jobs.js';
import { DateFormatError, parseIsoDate } from '../dates/calendar.js';
import { nextPeriod, periodContaining, previousPeriod, type Period } from '../dates/periods.js';
import type { PlannedPull } from './pull.js';

/** The order a backfill's pulls are queued, and so taken by the workers. */
export type BackfillOrder = 'newest-first' | 'oldest-first';

/**
 * The pulls of a backfill, every period of from..to for each report, in the order to run them.
 * `newest-first` (the default) sorts by period end, newest first, every report of a period before
 * the period before, so dashboards get recent days first. `oldest-first` goes report by report,
 * oldest period first.
 */
export function planBackfill(
  reports: readonly ReportJob[],
  from: string,
  to: string,
  order: BackfillOrder = 'newest-first',
): PlannedPull[] {
  return [...backfillPulls(reports, from, to, order)];
}

/**
 * The pulls of planBackfill, one at a time, in the same order. It holds one period per report, so
 * a plan of any length costs the same memory. Throws at once (not at the first pull) for an empty
 * range.
 */
export function backfillPulls(
  reports: readonly ReportJob[],
  from: string,
  to: string,
  order: BackfillOrder = 'newest-first',
): Generator<PlannedPull, void, undefined> {
  if (parseIsoDate(from) > parseIsoDate(to))
    throw new DateFormatError(`the range ${from}..${to} is empty: --from must not be after --to`);
  return order === 'oldest-first' ? oldestFirst(reports, from, to) : newestFirst(reports, from, to);
}

/** How many pulls backfillPulls gives, counted without holding them. */
export function countBackfill(reports: readonly ReportJob[], from: string, to: string): number {
  let n = 0;
  for (const _ of backfillPulls(reports, from, to, 'oldest-first')) n++;
  return n;
}

/** Report by report, each period of from..to oldest first (periodsBetween, lazily). */
function* oldestFirst(reports: readonly ReportJob[], from: string, to: string): Generator<PlannedPull> {
  for (const r of reports)
    for (let p = periodContaining(from, r.period); p.start <= to; p = nextPeriod(p, r.period))
      yield { report: r.name, period: p };
}

/**
 * Every report's periods newest first, merged by period end, newest first; of equal ends, the
 * report defined first goes first (what a stable sort of the oldest-first plan by end gives).
 */
function* newestFirst(reports: readonly ReportJob[], from: string, to: string): Generator<PlannedPull> {
  const heads: Array<Period | undefined> = reports.map((r) => periodContaining(to, r.period));
  for (;;) {
    let pick = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i];
      if (head === undefined) continue;
      const best = pick < 0 ? undefined : heads[pick];
      if (best === undefined || head.end > best.end) pick = i;
    }
    const report = reports[pick];
    const period = heads[pick];
    if (report === undefined || period === undefined) return;
    yield { report: report.name, period };
    const before = previousPeriod(period, report.period);
    heads[pick] = before.end >= from ? before : undefined;
  }
}
