// The jobs on our queues, without loading BullMQ: the queue, job and scheduler names, each job's
// payload and how a worker reads it back (anything from the queue's store is checked), and the job
// counts status, /metrics and /health show.
import type { IQueueBackend, Queue } from 'bullmq';
import { ACCOUNT_NAME, DEFAULT_ACCOUNT } from '../config/accounts.js';
import { isIsoDate } from '../dates/calendar.js';
import type { Period } from '../dates/periods.js';

/** Queue of report pulls: one job per report definition x period. */
export const REPORT_QUEUE = 'report-pulls';
/** Queue of catalogue (campaigns, creatives) syncs. */
export const ENTITY_QUEUE = 'entity-sync';
/** Queue of scheduler ticks: triggers only, as a job scheduler cannot deduplicate the jobs it makes. */
export const TICK_QUEUE = 'report-ticks';

/** Job name of a report pull in REPORT_QUEUE. */
export const PULL_JOB = 'pull';
/** Job name of a scheduler tick in TICK_QUEUE. */
export const TICK_JOB = 'tick';
/** Job name of a catalogue sync in ENTITY_QUEUE. */
export const SYNC_JOB = 'sync';

/** Id of a definition's job scheduler (`...@account` for a catalogue sync of an account not `default`). */
export function schedulerId(kind: 'report' | 'entities', name: string, account?: string): string {
  return account === undefined || account === 'default'
    ? `adops-${kind}-${name}`
    : `adops-${kind}-${name}@${account}`;
}

/** Whether a scheduler id is one schedulerId makes: `adops schedule` leaves anyone else's alone. */
export function isOurScheduler(id: string): boolean {
  return /^adops-(report|entities)-[a-z][a-z0-9_]*(@[a-z][a-z0-9_]*)?$/.test(id);
}

/** Queue of webhook work: signed event deliveries and the periodic freshness evaluation. */
export const WEBHOOK_QUEUE = 'webhooks';
/** Job name of a freshness evaluation (report.late / report.fresh) in WEBHOOK_QUEUE. */
export const FRESHNESS_JOB = 'freshness';
/** Id of the job scheduler of freshness evaluations (outside the report/entities ids of `adops schedule`). */
export const FRESHNESS_SCHEDULER = 'adops-webhooks-freshness';

/** Data of a report pull job: which report and period, never a key or URL (the worker has its config). */
export interface PullJobData {
  /** The ad server account (ADOPS_ACCOUNTS_FILE); absent means DEFAULT_ACCOUNT (see pullAccount). */
  readonly account?: string;
  readonly report: string;
  /** YYYY-MM-DD, inclusive. */
  readonly periodStart: string;
  /** YYYY-MM-DD, inclusive. */
  readonly periodEnd: string;
  /** The table version an evolution planned it for: only keeps it apart from an old-shape pull (dedup). */
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
 * The deduplication id of a pull: while one of the same account, report and period is unfinished, a
 * second is not enqueued (BullMQ drops the key when it finishes). The default account's ids name no account.
 */
export function pullDedupId(data: PullJobData): string {
  const account = pullAccount(data);
  const base =
    account === DEFAULT_ACCOUNT
      ? `${data.report}/${data.periodStart}/${data.periodEnd}`
      : `${account}/${data.report}/${data.periodStart}/${data.periodEnd}`;
  return data.version === undefined ? base : `${base}/v${data.version}`;
}

/** Narrows untrusted job data (it comes from the queue's store) to a PullJobData, or undefined. */
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

/** The job states status shows, as BullMQ's getJobCounts names them. */
export const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'] as const;
export type CountedState = (typeof COUNTED_STATES)[number];

/** Anything with BullMQ's Queue.getJobCounts. */
interface CountingQueue {
  getJobCounts(...states: CountedState[]): Promise<Record<string, number>>;
}

/** Job counts of the three queues by queue name, then by state. */
export async function jobCounts(
  queues: { readonly pulls: CountingQueue; readonly ticks: CountingQueue; readonly syncs: CountingQueue },
  ...states: CountedState[]
): Promise<Record<string, Record<string, number>>> {
  const [pulls, ticks, syncs] = await Promise.all([
    queues.pulls.getJobCounts(...states),
    queues.ticks.getJobCounts(...states),
    queues.syncs.getJobCounts(...states),
  ]);
  return { [REPORT_QUEUE]: pulls, [TICK_QUEUE]: ticks, [ENTITY_QUEUE]: syncs };
}

/** A pull that failed for good, as status weighs it against the warehouse. */
export interface FailedPullRecord {
  readonly account: string;
  readonly report: string;
  readonly periodStart: string;
  readonly periodEnd: string;
  /** When it failed (ms since the epoch, the worker's clock). */
  readonly failedAt: number;
}

/** Anything with BullMQ's Queue.getFailed. */
interface FailedListing {
  getFailed(
    start: number,
    end: number,
  ): Promise<ReadonlyArray<{ data: unknown; finishedOn?: number } | undefined>>;
}

/** The failed pulls kept in `queue`, newest first, up to `max` (BullMQ keeps at most 20,000, for 14 days), read
 * in pages; a job whose data is not a pull's, or with no finish time, is left out. */
export async function failedPulls(queue: FailedListing, max = 20_000): Promise<FailedPullRecord[]> {
  const out: FailedPullRecord[] = [];
  const page = 1_000;
  for (let start = 0; start < max; start += page) {
    const jobs = await queue.getFailed(start, Math.min(start + page, max) - 1);
    for (const job of jobs) {
      const data = asPullData(job?.data);
      if (data === undefined || job?.finishedOn === undefined) continue;
      out.push({
        account: pullAccount(data),
        report: data.report,
        periodStart: data.periodStart,
        periodEnd: data.periodEnd,
        failedAt: job.finishedOn,
      });
    }
    if (jobs.length < page) break;
  }
  return out;
}

// The webhooks queue's payloads: every event a webhook receives (webhooks/events.ts queues them).

/** Job name of one event's delivery in the webhooks queue. */
export const DELIVER_JOB = 'deliver';

/** A pull failed for good: a 4xx, a definition gone, or its attempts spent. */
export interface PeriodFailedEvent {
  readonly type: 'period.failed';
  /** The account, for an account other than `default` (ADOPS_ACCOUNTS_FILE). */
  readonly account?: string;
  readonly report: string;
  /** YYYY-MM-DD, both inclusive. */
  readonly period_start: string;
  readonly period_end: string;
  readonly reason: string;
  /** Attempts of the pull job made, the last included. */
  readonly attempts: number;
  /** The report_loads row of the last attempt, when it was recorded. */
  readonly load_id: number | null;
}

/** How a report stands against its freshness limit when it became late or fresh again. */
interface FreshnessFields {
  readonly account?: string;
  readonly report: string;
  /** Start of the newest loaded period (YYYY-MM-DD), null when none is loaded. */
  readonly last_loaded: string | null;
  /** Age of the newest data in hours, null when none is loaded. */
  readonly age_hours: number | null;
  /** How old its newest data may get (`freshness:` or its default), in hours. */
  readonly freshness_hours: number;
}

/** A report's newest data became older than its freshness limit (or it has none). */
export type ReportLateEvent = FreshnessFields & { readonly type: 'report.late' };
/** A late report is fresh again. */
export type ReportFreshEvent = FreshnessFields & { readonly type: 'report.fresh' };

/** A report's stable views now serve a new table version (report evolution). */
export interface EvolutionSwappedEvent {
  readonly type: 'evolution.swapped';
  readonly report: string;
  readonly from_version: number;
  readonly to_version: number;
}

/** Two reports of one grain disagree on a period beyond what late data explains (status/agreement.ts). */
export interface ReportDisagreesEvent {
  readonly type: 'report.disagrees';
  readonly account?: string;
  readonly report: string;
  readonly other_report: string;
  readonly period_start: string;
  readonly period_end: string;
  readonly counters: readonly string[];
  readonly totals: Readonly<Record<string, number | null>>;
  readonly other_totals: Readonly<Record<string, number | null>>;
  readonly loaded_at: string;
  readonly other_loaded_at: string;
  readonly reason: string;
}

/** Every event a webhook receives. */
export type WebhookEvent =
  PeriodFailedEvent | ReportLateEvent | ReportFreshEvent | EvolutionSwappedEvent | ReportDisagreesEvent;

/** The body a webhook receives: the event with its delivery id and the time it happened. */
export type WebhookDelivery = WebhookEvent & {
  /** Unique per event, the same on every retry (also `webhook-id`): receivers deduplicate on it. */
  readonly id: string;
  /** ISO 8601, UTC. */
  readonly occurred_at: string;
};

export type WebhookQueue = Queue<
  WebhookDelivery,
  unknown,
  string,
  WebhookDelivery,
  unknown,
  string,
  IQueueBackend,
  unknown
>;
