// Our queues' jobs, without loading BullMQ: names, payloads (checked on reading), and job counts.
import type { IQueueBackend, Queue } from 'bullmq';
import { ACCOUNT_NAME, DEFAULT_ACCOUNT } from '../config/accounts.js';
import { isIsoDate } from '../dates/calendar.js';
import type { Period } from '../dates/periods.js';

export const REPORT_QUEUE = 'report-pulls';
export const ENTITY_QUEUE = 'entity-sync';
/** Queue of scheduler ticks: triggers only, as a job scheduler cannot deduplicate the jobs it makes. */
export const TICK_QUEUE = 'report-ticks';

export const PULL_JOB = 'pull';
export const TICK_JOB = 'tick';
export const SYNC_JOB = 'sync';

/** Id of a definition's job scheduler (`...@account` for a catalogue sync of an account not `default`);
 * `today` is a report's `today:` ticks. */
export function schedulerId(kind: 'report' | 'entities' | 'today', name: string, account?: string): string {
  return account === undefined || account === 'default'
    ? `adops-${kind}-${name}`
    : `adops-${kind}-${name}@${account}`;
}

/** Whether a scheduler id is one schedulerId makes: `adops schedule` leaves anyone else's alone. */
export function isOurScheduler(id: string): boolean {
  return /^adops-(report|entities|today)-[a-z][a-z0-9_]*(@[a-z][a-z0-9_]*)?$/.test(id);
}

/** Queue of webhook work: signed event deliveries and the periodic freshness evaluation. */
export const WEBHOOK_QUEUE = 'webhooks';
export const FRESHNESS_JOB = 'freshness';
/** Id of the job scheduler of freshness evaluations (outside the report/entities ids of `adops schedule`). */
export const FRESHNESS_SCHEDULER = 'adops-webhooks-freshness';

/** Data of a report pull job: which report and period, never a key or URL (the worker has its config). */
export interface PullJobData {
  /** The ad server account (ADOPS_ACCOUNTS_FILE); absent means DEFAULT_ACCOUNT (see pullAccount). */
  readonly account?: string;
  readonly report: string;
  readonly periodStart: string; // YYYY-MM-DD, both inclusive.
  readonly periodEnd: string;
  /** The table version an evolution planned it for: only keeps it apart from an old-shape pull (dedup). */
  readonly version?: number;
  /** A pull of a period not yet ended (`today:`, backfill --today): loaded provisional if it still has not. */
  readonly provisional?: true;
  /** One request for the consecutive periods from periodStart..periodEnd (the first) to the one ending here
   * (days_per_request); absent: that one period, as every job of 1.0. A 1.0 worker loads the first alone. */
  readonly until?: string;
}

/** The account a pull is for: DEFAULT_ACCOUNT when the payload names none. */
export function pullAccount(data: Pick<PullJobData, 'account'>): string {
  return data.account ?? DEFAULT_ACCOUNT;
}

/** Data of a catalogue sync: its account (absent in syncs of a release before accounts: DEFAULT_ACCOUNT). */
export interface SyncJobData {
  readonly account?: string;
}

/** The account a sync job is for; undefined when its data is not valid. */
export function syncAccount(data: unknown): string | undefined {
  const account = (data as { account?: unknown } | null)?.account;
  if (account === undefined) return DEFAULT_ACCOUNT;
  return typeof account === 'string' && ACCOUNT_NAME.test(account) ? account : undefined;
}

export interface TickJobData {
  readonly report: string;
  readonly today?: string; // set on a `today:` scheduler's ticks: enqueue the current period, provisional
}

export function pullData(
  report: string,
  period: Period,
  version?: number,
  account: string = DEFAULT_ACCOUNT,
  until?: string,
): PullJobData {
  return {
    account,
    report,
    periodStart: period.start,
    periodEnd: period.end,
    ...(version === undefined ? {} : { version }),
    ...(until === undefined ? {} : { until }),
  };
}

/** The days a pull covers: its period, or its request's first through last period. */
export function pullPeriod(data: PullJobData): Period {
  return { start: data.periodStart, end: data.until ?? data.periodEnd };
}

/** A pull's deduplication id: no second pull of an account, report and period while one is unfinished. */
export function pullDedupId(data: PullJobData): string {
  const account = pullAccount(data);
  const base =
    account === DEFAULT_ACCOUNT
      ? `${data.report}/${data.periodStart}/${data.periodEnd}`
      : `${account}/${data.report}/${data.periodStart}/${data.periodEnd}`;
  const range = data.until === undefined ? base : `${base}/${data.until}`;
  return `${range}${data.version === undefined ? '' : `/v${data.version}`}${data.provisional === true ? '/today' : ''}`;
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
  const until = v.until;
  if (until !== undefined && (typeof until !== 'string' || !isIsoDate(until) || until < v.periodEnd))
    return undefined;
  return {
    account: v.account ?? DEFAULT_ACCOUNT,
    report: v.report,
    periodStart: v.periodStart,
    periodEnd: v.periodEnd,
    ...(version === undefined ? {} : { version }),
    ...(v.provisional === true ? { provisional: true } : {}),
    ...(until === undefined ? {} : { until }),
  };
}

export const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'] as const;
export type CountedState = (typeof COUNTED_STATES)[number];

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
  readonly failedAt: number; // ms since the epoch, the worker's clock.
}

interface FailedListing {
  getFailed(
    start: number,
    end: number,
  ): Promise<ReadonlyArray<{ data: unknown; finishedOn?: number } | undefined>>;
}

/** Failed pulls in `queue` (BullMQ keeps 20,000 for 14 days), newest first, up to `max`, read in pages. */
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
export const DELIVER_JOB = 'deliver';

/** A pull failed for good: a 4xx, a definition gone, or its attempts spent. */
export interface PeriodFailedEvent {
  readonly type: 'period.failed';
  readonly account?: string;
  readonly report: string;
  readonly period_start: string; // YYYY-MM-DD, both inclusive.
  readonly period_end: string;
  readonly reason: string;
  readonly attempts: number;
  readonly load_id: number | null;
}

interface FreshnessFields {
  readonly account?: string;
  readonly report: string;
  /** Start of the newest loaded period and its age; null when none is loaded. */
  readonly last_loaded: string | null;
  readonly age_hours: number | null;
  readonly freshness_hours: number;
}

/** A report's newest data became older than its freshness limit (or it has none). */
export type ReportLateEvent = FreshnessFields & { readonly type: 'report.late' };
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

/** A campaign is behind its goal (bi_campaign_pacing), told once per campaign and UTC day: its row of the view. */
export interface CampaignBehindEvent {
  readonly type: 'campaign.behind';
  readonly account: string;
  readonly campaign_id: number;
  readonly [column: string]: unknown;
}

export type WebhookEvent =
  | PeriodFailedEvent
  | ReportLateEvent
  | ReportFreshEvent
  | EvolutionSwappedEvent
  | ReportDisagreesEvent
  | CampaignBehindEvent;

/** The body a webhook receives: the event with its delivery id and the time it happened. */
export type WebhookDelivery = WebhookEvent & {
  /** Unique per event, the same on every retry (also `webhook-id`): receivers deduplicate on it. */
  readonly id: string;
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
