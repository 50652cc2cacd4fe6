// A scheduler tick: the job a BullMQ job scheduler creates. It enqueues the real pulls, since
// scheduler jobs cannot be deduplicated themselves.
import type { ReportJob } from '../config/jobs.js';
import type { ReportLookup } from '../config/live-jobs.js';
import type { Period } from '../report/types.js';
import { enqueuePulls } from './enqueue.js';
import type { PeriodState } from '../plan/gaps.js';
import { planTick, scheduledTime, tickWindows, type TickJob } from '../plan/tick.js';
import type { PullQueue } from './queues.js';

/** Gap repairs one tick enqueues at most, by default. */
export const DEFAULT_GAP_CAP = 60;

export interface TickDeps {
  /** The definitions as they are when the tick runs (a worker follows its jobs folder). */
  readonly reports: ReportLookup;
  readonly pulls: PullQueue;
  /** The warehouse's last attempt per period of `report` within from..to. */
  states(report: ReportJob, from: string, to: string): Promise<PeriodState[]>;
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
  const states =
    first === undefined || last === undefined || deps.gapCap <= 0
      ? []
      : await deps.states(report, first.start, last.end);
  const plan = planTick(windows, states, deps.gapCap);
  const pulls = [...plan.window, ...plan.gaps].map((period) => ({ report: report.name, period }));
  const enqueued = await enqueuePulls(deps.pulls, pulls);
  return {
    report: report.name,
    scheduledFor: at.toISOString(),
    window: plan.window,
    gaps: plan.gaps,
    added: enqueued.filter((e) => e.added).length,
  };
}
