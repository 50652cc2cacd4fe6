import { ACCOUNT_NAME, DEFAULT_ACCOUNT } from '../config/accounts.js';
import { isIsoDate } from '../dates/calendar.js';
import type { Period } from '../dates/periods.js';

/**
 * Data of a report pull job: which report and which period, nothing else. No key, no URL: Redis
 * is not a place for secrets, and the worker resolves everything else from its own config.
 */
export interface PullJobData {
  /**
   * The ad server account (ADOPS_ACCOUNTS_FILE). Absent in pulls queued by a release before
   * accounts: those are DEFAULT_ACCOUNT's (see pullAccount).
   */
  readonly account?: string;
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

/** The account a pull is for: DEFAULT_ACCOUNT when the payload names none. */
export function pullAccount(data: Pick<PullJobData, 'account'>): string {
  return data.account ?? DEFAULT_ACCOUNT;
}

/** Data of a catalogue sync: its account (absent in syncs of a release before accounts: DEFAULT_ACCOUNT). */
export interface SyncJobData {
  readonly account?: string;
}

/** The account a sync job is for, or undefined when its data is not a valid one. */
export function syncAccount(data: unknown): string | undefined {
  const account = (data as { account?: unknown } | null)?.account;
  if (account === undefined) return DEFAULT_ACCOUNT;
  return typeof account === 'string' && ACCOUNT_NAME.test(account) ? account : undefined;
}

/** Data of a scheduler tick: the report definition whose window is due. */
export interface TickJobData {
  readonly report: string;
}

/** The pull payload of a report and period. */
export function pullData(
  report: string,
  period: Period,
  version?: number,
  account: string = DEFAULT_ACCOUNT,
): PullJobData {
  return {
    account,
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
 * The deduplication id of a pull: while a pull of the same account, report and period waits, is
 * delayed for a retry or runs, a second one is not enqueued. BullMQ drops the key when the job
 * finishes, so a later request for the same period pulls it again. The default account keeps the
 * ids of the release before accounts, so its queued pulls still deduplicate against new ones.
 */
export function pullDedupId(data: PullJobData): string {
  const account = pullAccount(data);
  const base =
    account === DEFAULT_ACCOUNT
      ? `${data.report}/${data.periodStart}/${data.periodEnd}`
      : `${account}/${data.report}/${data.periodStart}/${data.periodEnd}`;
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
  if (v.account !== undefined && (typeof v.account !== 'string' || !ACCOUNT_NAME.test(v.account)))
    return undefined;
  return {
    account: v.account ?? DEFAULT_ACCOUNT,
    report: v.report,
    periodStart: v.periodStart,
    periodEnd: v.periodEnd,
    ...(version === undefined ? {} : { version }),
  };
}
