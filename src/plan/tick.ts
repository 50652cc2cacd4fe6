// What a scheduler tick pulls: the report's window as of the scheduled instant, then gap repairs.
// Pure; the tick job (src/queue/tick.ts) reads the warehouse's states and enqueues.
import type { ReportJob } from '../config/jobs.js';
import type { Period } from '../dates/periods.js';
import { periodsToHeal, tickPlan, type PeriodState } from './gaps.js';
import { retained } from './retention.js';
import { healWindow, scheduledWindow } from './windows.js';

/** The scheduled job's facts a tick needs (a subset of a BullMQ Job). */
export interface TickJob {
  readonly id?: string | undefined;
  readonly data: { report?: unknown };
  readonly timestamp: number;
  readonly delay?: number;
  readonly opts: { prevMillis?: number | undefined };
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

/** The two windows of a tick: the periods it pulls again, and the periods whose gaps it repairs. */
export interface TickWindows {
  /** Yesterday and its lookback, in the schedule's time zone as of the scheduled instant. */
  readonly window: Period[];
  /** The last `healDays` days up to yesterday as of now (or the scheduled instant, if later). */
  readonly watched: Period[];
}

/**
 * The windows of a tick of `report` scheduled at `at` and run `now`. Gaps are judged up to now: a
 * tick that waited days for a worker (all were down) still heals everything up to yesterday, while
 * its window stays that of its own night.
 */
export function tickWindows(report: ReportJob, at: Date, now: Date, healDays: number): TickWindows {
  const tz = report.schedule?.timezone ?? 'UTC';
  // Periods past the report's retention_months are dropped on purpose: neither pulled nor healed.
  return {
    window: retained(report, scheduledWindow(at, tz, report.period, report.lookbackDays), now),
    watched: retained(report, healWindow(now > at ? now : at, tz, report.period, healDays), now),
  };
}

/** The periods a tick enqueues: its whole window, then at most `gapCap` gaps of the watched days. */
export function planTick(
  windows: TickWindows,
  states: readonly PeriodState[],
  gapCap: number,
): { window: Period[]; gaps: Period[] } {
  const gaps = gapCap <= 0 ? [] : periodsToHeal(windows.watched, states);
  return tickPlan(windows.window, gaps, gapCap);
}
