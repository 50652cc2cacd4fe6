// Heal: the warehouse, not Redis, is the record of what is loaded. Rebuild the plan from it.
import type { Pool } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { enqueuePulls } from './enqueue.js';
import { loadStates } from './load-states.js';
import { pullData, type PullJobData } from './payload.js';
import { healWindow } from './periods.js';
import { periodsToHeal } from './plan.js';
import type { PullQueue } from './queues.js';
import { summarize, type BackfillResult } from './backfill.js';

/**
 * The pulls that heal the last `days` days (up to yesterday, in each report's schedule time zone):
 * every period with no load on record, or whose last attempt failed.
 */
export async function planHeal(
  pool: Pool,
  schema: string,
  reports: readonly ReportJob[],
  days: number,
  now: Date = new Date(),
): Promise<PullJobData[]> {
  const out: PullJobData[] = [];
  for (const report of reports) {
    const window = healWindow(now, report.schedule?.timezone ?? 'UTC', report.period, days);
    const first = window[0];
    const last = window.at(-1);
    if (first === undefined || last === undefined) continue;
    const states = await loadStates(pool, schema, report, first.start, last.end);
    for (const p of periodsToHeal(window, states)) out.push(pullData(report.name, p));
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
): Promise<BackfillResult> {
  return summarize(await enqueuePulls(queue, await planHeal(pool, schema, reports, days, now)));
}
