// A scheduler tick: the job a BullMQ job scheduler creates. It enqueues the real pulls, since
// scheduler jobs cannot be deduplicated themselves.
import type { ReportJob } from '../config/jobs.js';
import type { ReportLookup } from '../config/jobs.js';
import type { Period } from '../flatten/types.js';
import { runsReport } from '../config/accounts.js';
import { enqueuePulls } from './enqueue.js';
import { ONLY_DEFAULT, type PlanAccount, type PlannedPull } from '../plan/pulls.js';
import type { PeriodState } from '../plan/pulls.js';
import { planTick, scheduledTime, tickWindows, type TickJob } from '../plan/pulls.js';
import type { PullQueue } from './queues.js';

/** Gap repairs one tick enqueues at most, by default. */
export const DEFAULT_GAP_CAP = 60;

export interface TickDeps {
  /** The definitions as they are when the tick runs (a worker follows its jobs folder). */
  readonly reports: ReportLookup;
  readonly pulls: PullQueue;
  /** The warehouse's last attempt per period of `report` and `account` within from..to. */
  states(report: ReportJob, from: string, to: string, account: string): Promise<PeriodState[]>;
  /** The accounts pulled (default: the one account `default`); each running the report gets its pulls. */
  readonly accounts?: readonly PlanAccount[];
  /** Days back the gap repair looks (config.healDays). */
  readonly healDays: number;
  /** Gap repairs per tick at most. */
  readonly gapCap: number;
  /** The clock (tests fix it); default the real one. */
  readonly now?: () => Date;
}

export interface TickResult {
  readonly report: string;
  readonly scheduledFor: string;
  readonly window: readonly Period[];
  readonly gaps: readonly Period[];
  /** Pulls added; the rest were already waiting or running. */
  readonly added: number;
}

/**
 * Runs one tick: enqueues every period of the report's window (yesterday and its lookback, in the
 * schedule's time zone as of the scheduled instant), then up to gapCap periods of the last
 * healDays (up to yesterday as of now) that have no successful load or whose last attempt failed.
 */
export async function runTick(deps: TickDeps, job: TickJob): Promise<TickResult> {
  const name = String(job.data.report);
  const report = deps.reports.get(name);
  if (report === undefined)
    throw new Error(
      `scheduler tick for report "${name}", which this worker's jobs folder does not define: ` +
        'run `adops schedule` after deleting a definition, and deploy the same jobs/ to every worker',
    );
  const at = scheduledTime(job);
  const windows = tickWindows(report, at, deps.now?.() ?? new Date(), deps.healDays);
  const first = windows.watched[0];
  const last = windows.watched.at(-1);
  const pulls: PlannedPull[] = [];
  const gaps: Period[] = [];
  let window: readonly Period[] = [];
  for (const account of deps.accounts ?? ONLY_DEFAULT) {
    if (!runsReport(account, report.name)) continue;
    const states =
      first === undefined || last === undefined || deps.gapCap <= 0
        ? []
        : await deps.states(report, first.start, last.end, account.name);
    // Each account has its own gap budget: one account's backlog never starves another's repairs.
    const plan = planTick(windows, states, deps.gapCap);
    window = plan.window;
    gaps.push(...plan.gaps);
    for (const period of [...plan.window, ...plan.gaps])
      pulls.push({ account: account.name, report: report.name, period });
  }
  const enqueued = await enqueuePulls(deps.pulls, pulls);
  return {
    report: report.name,
    scheduledFor: at.toISOString(),
    window,
    gaps,
    added: enqueued.filter((e) => e.added).length,
  };
}
