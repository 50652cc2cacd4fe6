// Webhook events and their queue: what ADOPS_WEBHOOK_URL is told, queued in one call (the webhook
// worker delivers them, never a pull), and what the freshness watch remembers so it tells each once.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/log/logger.js';
import { execute, rowsOf, type Warehouse } from '../platform/pg/handle.js';
import { claimBehind, claimDisagreement, swapState } from './sql.js';
import {
  DELIVER_JOB,
  type CampaignBehindEvent,
  type WebhookEvent,
  type WebhookDelivery,
  type WebhookQueue,
} from '../platform/queue/jobs.js';

/** Hands an event to the webhooks; returns at once, never throws (see enqueueWebhook). */
export type Notify = (event: WebhookEvent) => void;

/** A Notify that drops every event: webhooks are off (no ADOPS_WEBHOOK_URL). */
export const NO_WEBHOOKS: Notify = () => undefined;

/** The delivery of `event`: a fresh id, its type and the time, ahead of the event's own fields. */
export function webhookDelivery(event: WebhookEvent, now: Date = new Date()): WebhookDelivery {
  // Spelled out so that the body starts with id, type and occurred_at, whatever the event's fields.
  return Object.assign({ id: randomUUID(), type: event.type, occurred_at: now.toISOString() }, event);
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

/** Records the report's freshness `state`; returns the one replaced (null: never seen; `state`: same). */
export async function swapFreshnessState(
  wh: Warehouse,
  account: string,
  report: string,
  state: string,
): Promise<string | null> {
  const rows = await rowsOf(wh, swapState(wh.schema, account, report, state));
  return rows.length === 0 ? state : (rows[0]?.previous ?? null);
}

export type Announced = readonly [
  account: string,
  start: string,
  end: string,
  report: string,
  other: string,
  sums: string,
];

/** Records a disagreement as announced: true unless announced within 400 days (the status window at most). */
export async function claimAnnouncement(wh: Warehouse, key: Announced): Promise<boolean> {
  return (await execute(wh, claimDisagreement(wh.schema, key, '400 days'))) === 1;
}

/** The campaign.behind events of campaigns behind and not yet told on the UTC day of `now`, claimed at once. */
export async function behindEvents(wh: Warehouse, now: Date = new Date()): Promise<CampaignBehindEvent[]> {
  const rows = await rowsOf(wh, claimBehind(wh.schema, now.toISOString().slice(0, 10)));
  return rows.map(({ row }) => ({ type: 'campaign.behind', ...row }));
}
