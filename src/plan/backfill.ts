// What a backfill pulls: pure, so the plan can be printed (--dry-run) and tested without Redis.
import type { ReportJob } from '../config/jobs.js';
import { periodsBetween } from '../dates/periods.js';
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
  const byReport = reports.flatMap((r) =>
    periodsBetween(from, to, r.period).map((period) => ({ report: r.name, period })),
  );
  if (order === 'oldest-first') return byReport;
  // Array.prototype.sort is stable: reports of the same period end keep their definition order.
  return byReport.sort((a, b) => (a.period.end === b.period.end ? 0 : a.period.end > b.period.end ? -1 : 1));
}
