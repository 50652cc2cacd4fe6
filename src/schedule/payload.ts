import { isIsoDate } from '../dates/calendar.js';
import type { Period } from '../dates/periods.js';

/**
 * Data of a report pull job: which report and which period, nothing else. No key, no URL: Redis
 * is not a place for secrets, and the worker resolves everything else from its own config.
 */
export interface PullJobData {
  readonly report: string;
  /** YYYY-MM-DD, inclusive. */
  readonly periodStart: string;
  /** YYYY-MM-DD, inclusive. */
  readonly periodEnd: string;
  /**
   * The table version an evolution planned the pull for: it only keeps the pull apart from a pull
   * of the same period in the old shape (deduplication), the worker loads by the current definition.
   */
  readonly version?: number;
}

/** Data of a scheduler tick: the report definition whose window is due. */
export interface TickJobData {
  readonly report: string;
}

/** The pull payload of a report and period. */
export function pullData(report: string, period: Period, version?: number): PullJobData {
  return {
    report,
    periodStart: period.start,
    periodEnd: period.end,
    ...(version === undefined ? {} : { version }),
  };
}

/** The period a pull names. */
export function pullPeriod(data: PullJobData): Period {
  return { start: data.periodStart, end: data.periodEnd };
}

/**
 * The deduplication id of a pull: while a pull of the same report and period waits, is delayed
 * for a retry or runs, a second one is not enqueued. BullMQ drops the key when the job finishes,
 * so a later request for the same period pulls it again.
 */
export function pullDedupId(data: PullJobData): string {
  const base = `${data.report}/${data.periodStart}/${data.periodEnd}`;
  return data.version === undefined ? base : `${base}/v${data.version}`;
}

/** Narrows untrusted job data (it comes from Redis) to a PullJobData, or undefined. */
export function asPullData(value: unknown): PullJobData | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.report !== 'string' || typeof v.periodStart !== 'string' || typeof v.periodEnd !== 'string')
    return undefined;
  if (!isIsoDate(v.periodStart) || !isIsoDate(v.periodEnd)) return undefined;
  const version = typeof v.version === 'number' && Number.isInteger(v.version) ? v.version : undefined;
  return {
    report: v.report,
    periodStart: v.periodStart,
    periodEnd: v.periodEnd,
    ...(version === undefined ? {} : { version }),
  };
}
