// Webhook events and their queue: what ADOPS_WEBHOOK_URL is told, queued in one call; the webhook
// worker delivers them, never a pull.
import { randomUUID } from 'node:crypto';
import type { IQueueBackend, Queue } from 'bullmq';
import type { Logger } from '../log/logger.js';

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

/** Two reports of one grain disagree on a period beyond what late data explains (observe/agreement.ts). */
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

/** Hands an event to the webhooks; returns at once, never throws (see enqueueWebhook). */
export type Notify = (event: WebhookEvent) => void;

/** A Notify that drops every event: webhooks are off (no ADOPS_WEBHOOK_URL). */
export const NO_WEBHOOKS: Notify = () => undefined;

/** The delivery of `event`: a fresh id, its type and the time, ahead of the event's own fields. */
export function webhookDelivery(event: WebhookEvent, now: Date = new Date()): WebhookDelivery {
  // Spelled out so that the body starts with id, type and occurred_at, whatever the event's fields.
  const head = { id: randomUUID(), type: event.type, occurred_at: now.toISOString() };
  return Object.assign(head, event) as WebhookDelivery;
}

/** Queues `event`, resolving to its delivery id; a failure is logged, never thrown (undefined). */
export async function enqueueWebhook(
  queue: WebhookQueue,
  event: WebhookEvent,
  logger: Logger,
  now: Date = new Date(),
): Promise<string | undefined> {
  const delivery = webhookDelivery(event, now);
  try {
    await queue.add(DELIVER_JOB, delivery, { jobId: delivery.id });
    return delivery.id;
  } catch (error) {
    logger.warn(
      { err: error, event: event.type, id: delivery.id },
      'could not queue a webhook event; it is lost',
    );
    return undefined;
  }
}

/** A Notify over `queue`: enqueues without waiting, so a slow Redis never holds a pull back. */
export function webhookNotifier(queue: WebhookQueue, logger: Logger): Notify {
  return (event) => void enqueueWebhook(queue, event, logger);
}
