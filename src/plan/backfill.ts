// What a backfill pulls: pure, so the plan can be printed (--dry-run) and tested without Redis.
import type { ReportJob } from '../config/jobs.js';
import { periodsBetween } from '../dates/periods.js';
import type { PlannedPull } from './pull.js';

/** The pulls of a backfill: every period of from..to for each report, report by report. */
export function planBackfill(reports: readonly ReportJob[], from: string, to: string): PlannedPull[] {
  return reports.flatMap((r) =>
    periodsBetween(from, to, r.period).map((period) => ({ report: r.name, period })),
  );
}
