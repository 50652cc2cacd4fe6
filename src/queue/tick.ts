// A scheduler tick: the job a BullMQ job scheduler creates. It enqueues the real pulls, since
// scheduler jobs cannot be deduplicated themselves.
import type { ReportJob } from '../config/jobs.js';
import type { Period } from '../report/types.js';
import { enqueuePulls } from './enqueue.js';
import { pullData } from './payload.js';
import { healWindow, scheduledWindow } from './periods.js';
import { periodsToHeal, tickPlan, type PeriodState } from './plan.js';
import type { PullQueue } from './queues.js';

/** Gap repairs one tick enqueues at most, by default. */
export const DEFAULT_GAP_CAP = 60;

export interface TickDeps {
  readonly reports: ReadonlyMap<string, ReportJob>;
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

/** The scheduled job's facts the tick needs (a subset of a BullMQ Job). */
export interface TickJob {
  readonly id?: string | undefined;
  readonly data: { report?: unknown };
  readonly timestamp: number;
  readonly delay?: number;
  readonly opts: { prevMillis?: number | undefined };
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
 * The instant a tick was scheduled for: BullMQ keeps it as `prevMillis` (and in the job id,
 * `repeat:<scheduler>:<millis>`); the time a worker gets to the job may be much later.
 */
export function scheduledTime(job: TickJob): Date {
  if (typeof job.opts.prevMillis === 'number') return new Date(job.opts.prevMillis);
  const fromId = /:(\d{10,})$/.exec(job.id ?? '');
  if (fromId !== null) return new Date(Number(fromId[1]));
  return new Date(job.timestamp + (job.delay ?? 0));
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
  const tz = report.schedule?.timezone ?? 'UTC';
  const window = scheduledWindow(at, tz, report.period, report.lookbackDays);
  // Gaps are judged up to now: a tick that waited days for a worker (all were down) still heals
  // everything up to yesterday, while its window stays that of its own night.
  const now = deps.now?.() ?? new Date();
  const watched = healWindow(now > at ? now : at, tz, report.period, deps.healDays);
  const first = watched[0];
  const last = watched.at(-1);
  const gaps =
    first === undefined || last === undefined || deps.gapCap <= 0
      ? []
      : periodsToHeal(watched, await deps.states(report, first.start, last.end));
  const plan = tickPlan(window, gaps, deps.gapCap);
  const pulls = [...plan.window, ...plan.gaps].map((p) => pullData(report.name, p));
  const enqueued = await enqueuePulls(deps.pulls, pulls);
  return {
    report: report.name,
    scheduledFor: at.toISOString(),
    window: plan.window,
    gaps: plan.gaps,
    added: enqueued.filter((e) => e.added).length,
  };
}
