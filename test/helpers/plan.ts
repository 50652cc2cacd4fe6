// Plans counted for tests: how many pulls a backfill gives, without holding them.
import type { ReportJob } from '../../src/platform/config/jobs.js';
import { backfillPulls } from '../../src/plan/pulls.js';

/** How many pulls backfillPulls gives, counted without holding them. */
export function countBackfill(reports: readonly ReportJob[], from: string, to: string): number {
  let n = 0;
  for (const _ of backfillPulls(reports, from, to, 'oldest-first')) n++;
  return n;
}
