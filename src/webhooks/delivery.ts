// One POST of a webhook body and what its answer means (delivered, retry, refused for good), each attempt
// signed afresh (Standard Webhooks) with its own timestamp: a captured one goes stale in 5 minutes.
import { request, type Dispatcher } from 'undici';
import { excerptOf } from '../api/malformed.js';
import { parseRetryAfter } from '../api/http.js';
import type { WebhookDelivery } from '../platform/queue/jobs.js';
import { createHmac } from 'node:crypto';
import { webhookSecretKey } from '../platform/config/env.js';

/** How long one delivery attempt may take, answer included. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** One attempt's outcome: `retry` when another may succeed (no sooner than a 429's or 503's Retry-After). */
export type DeliveryOutcome =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly retry: boolean; readonly reason: string; readonly retryAfterMs?: number };

export interface DeliveryTarget {
  readonly url: string;
  readonly secret: string; // The `whsec_` secret (ADOPS_WEBHOOK_SECRET).
  readonly dispatcher?: Dispatcher;
  readonly timeoutMs?: number;
}

/** POSTs `delivery` to the target, signed for this attempt; never throws. */
export async function postWebhook(
  target: DeliveryTarget,
  delivery: WebhookDelivery,
): Promise<DeliveryOutcome> {
  // The exact bytes the signature covers.
  const body = JSON.stringify(delivery);
  const timeoutMs = target.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(target.url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'adops-export-webhooks',
        ...webhookHeaders(target.secret, delivery.id, body),
        'x-adops-event': delivery.type,
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(target.dispatcher === undefined ? {} : { dispatcher: target.dispatcher }),
    });
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    const code = 'code' in e && typeof e.code === 'string' ? e.code : e.name;
    return { ok: false, retry: true, reason: `no answer from the webhook (${code}: ${e.message})` };
  }
  return outcomeOf(res.statusCode, res.headers['retry-after'], await readShort(res.body), target.secret);
}

/** What an answer means (pure): 2xx delivered; 429 and 5xx retried; anything else refused for good. */
export function outcomeOf(
  status: number,
  retryAfter: string | string[] | undefined,
  body: string,
  secret: string,
): DeliveryOutcome {
  if (status >= 200 && status < 300) return { ok: true, status };
  const said = body.trim() === '' ? '' : `: ${excerptOf(body, [secret])}`;
  const reason = `the webhook answered HTTP ${status}${said}`;
  if (status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(retryAfter, Date.now());
    return { ok: false, retry: true, reason, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }
  return { ok: false, retry: false, reason };
}

/** The start of an answer's body (for the reason), the rest discarded so the socket is freed. */
async function readShort(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (size < 1024) chunks.push(bytes);
      size += bytes.length;
    }
  } catch {
    // A body cut short still leaves its status to go by.
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, 1024);
}

/** `v1,<base64>` of the HMAC-SHA256 of `${id}.${timestamp}.${body}` under the secret's key. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const read = webhookSecretKey(secret);
  if (!('key' in read))
    throw new Error('the webhook secret is not a whsec_ secret (config validation was skipped)');
  const mac = createHmac('sha256', read.key);
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
    // The body's `id`, the same on every retry (receivers deduplicate on it).
    'webhook-id': id,
    // Each attempt's own time: a captured delivery goes stale.
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}
