// The unit every plan is made of: one report definition x one period.
import type { Period } from '../dates/periods.js';

/** One pull a plan asks for. */
export interface PlannedPull {
  readonly report: string;
  readonly period: Period;
  /** The table version the pull is planned for, when a report is evolving (see PullJobData). */
  readonly version?: number;
}

/** A short label for logs and messages: `daily_campaign 2026-01-05` or `... 2026-01-05..2026-01-11`. */
export function pullLabel(pull: PlannedPull): string {
  const { start, end } = pull.period;
  return `${pull.report} ${start === end ? start : `${start}..${end}`}`;
}
