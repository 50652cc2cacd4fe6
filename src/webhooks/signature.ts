// Webhook signatures the Standard Webhooks way (standardwebhooks.com): HMAC-SHA256 over
// `${id}.${timestamp}.${body}`, keyed by the base64 key of a `whsec_` secret, sent as
// `webhook-signature: v1,<base64>` beside `webhook-id` and `webhook-timestamp`. Signing the attempt's
// time makes a captured delivery worthless once a receiver's tolerance (5 minutes in the spec's
// libraries) has passed. Pure.
import { createHmac } from 'node:crypto';
import { webhookSecretKey } from '../config/env.js';

/** The delivery id: the body's `id`, the same on every retry (receivers deduplicate on it). */
export const ID_HEADER = 'webhook-id';
/** Unix seconds of the attempt: each retry sends a fresh one. */
export const TIMESTAMP_HEADER = 'webhook-timestamp';
/** `v1,<base64 HMAC-SHA256>`, possibly several separated by spaces (a receiver accepts any). */
export const SIGNATURE_HEADER = 'webhook-signature';
/** Header carrying the event type, e.g. `period.failed`. */
export const EVENT_HEADER = 'x-adops-event';

/** The key of a secret that passed config validation; throws on one that did not. */
function keyOf(secret: string): Buffer {
  const read = webhookSecretKey(secret);
  if ('key' in read) return read.key;
  throw new Error('the webhook secret is not a whsec_ secret (config validation was skipped)');
}

/** `v1,<base64>` of the HMAC-SHA256 of `${id}.${timestamp}.${body}` under the secret's key. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac('sha256', keyOf(secret));
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

/** The Standard Webhooks headers of one attempt to deliver `body` (whose `id` is `id`) at `now`. */
export function webhookHeaders(
  secret: string,
  id: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    [ID_HEADER]: id,
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signWebhook(secret, id, timestamp, body),
  };
}
