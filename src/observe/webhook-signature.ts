// The signature of a webhook body: HMAC-SHA256 of the exact bytes sent, keyed by
// ADOPS_WEBHOOK_SECRET, as `sha256=<hex>`. Pure, so receivers' checks can be tested against it.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the signature. */
export const SIGNATURE_HEADER = 'x-adops-signature';
/** Header carrying the event type, e.g. `period.failed`. */
export const EVENT_HEADER = 'x-adops-event';
/** Header carrying the delivery id (also the body's `id`): the same on every retry. */
export const DELIVERY_HEADER = 'x-adops-delivery';

/** `sha256=<hex>` of `body` under `secret`. */
export function signBody(body: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** True when `signature` is signBody(body, secret), compared in constant time. */
export function verifyBody(body: string | Buffer, secret: string, signature: string): boolean {
  const expected = Buffer.from(signBody(body, secret));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
