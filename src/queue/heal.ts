// Heal: the warehouse, not Redis, is the record of what is loaded. Read it and enqueue the plan
// (src/plan/heal.ts) it gives.
import type { Pool } from 'pg';
import { runsReport } from '../config/accounts.js';
import type { ReportJob } from '../config/jobs.js';
import { healWindowOf, planHeal } from '../plan/heal.js';
import { ONLY_DEFAULT, type PlanAccount, type PlannedPull } from '../plan/pull.js';
import { loadStates } from '../warehouse/load/states.js';
import { summarize, type BackfillResult } from './backfill.js';
import { enqueuePulls } from './enqueue.js';
import type { PullQueue } from './queues.js';

/**
 * The pulls that heal the last `days` days (up to yesterday, in each report's schedule time zone)
 * of each account: every period with no load on record, or whose last attempt failed.
 */
export async function readHealPlan(
  pool: Pool,
  schema: string,
  reports: readonly ReportJob[],
  days: number,
  now: Date = new Date(),
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<PlannedPull[]> {
  const out: PlannedPull[] = [];
  for (const account of accounts)
    for (const report of reports) {
      if (!runsReport(account, report.name)) continue;
      const window = healWindowOf(report, now, days);
      const first = window[0];
      const last = window.at(-1);
      if (first === undefined || last === undefined) continue;
      const states = await loadStates(pool, schema, report, first.start, last.end, account.name);
      out.push(...planHeal(report, window, states).map((p) => ({ ...p, account: account.name })));
    }
  return out;
}

/** Plans a heal and enqueues it (pulls already waiting or running are not added twice). */
export async function enqueueHeal(
  queue: PullQueue,
  pool: Pool,
  schema: string,
  reports: readonly ReportJob[],
  days: number,
  now: Date = new Date(),
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<BackfillResult> {
  return summarize(await enqueuePulls(queue, await readHealPlan(pool, schema, reports, days, now, accounts)));
}
