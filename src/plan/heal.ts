// What heal pulls: the periods of the window the warehouse has no good load of. Pure; the states
// are read by the caller (src/queue/heal.ts).
import type { ReportJob } from '../config/jobs.js';
import type { Period } from '../dates/periods.js';
import { periodsToHeal, type PeriodState } from './gaps.js';
import type { PlannedPull } from './pull.js';
import { retained } from './retention.js';
import { healWindow } from './windows.js';

/**
 * The periods heal watches for `report`: the last `days` days up to yesterday in its schedule's
 * time zone, less those older than its retention_months (dropped on purpose, never re-pulled).
 */
export function healWindowOf(report: ReportJob, now: Date, days: number): Period[] {
  return retained(report, healWindow(now, report.schedule?.timezone ?? 'UTC', report.period, days), now);
}

/** The pulls that heal `window` given the warehouse's `states`: no load on record, or a failed last one. */
export function planHeal(
  report: ReportJob,
  window: readonly Period[],
  states: readonly PeriodState[],
): PlannedPull[] {
  return periodsToHeal(window, states).map((period) => ({ report: report.name, period }));
}
