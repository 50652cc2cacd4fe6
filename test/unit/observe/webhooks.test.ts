import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { transition } from '../../../src/observe/freshness-watch.js';
import { outcomeOf, webhookBody } from '../../../src/observe/webhook-delivery.js';
import { signBody, verifyBody } from '../../../src/observe/webhook-signature.js';
import { webhookDelivery } from '../../../src/schedule/webhooks.js';

const SECRET = 'whsec-0123456789abcdef';

describe('webhook signature', () => {
  it('is sha256= and the hex HMAC-SHA256 of the exact bytes', () => {
    const body = '{"id":"x","type":"report.late"}';
    const expected = createHmac('sha256', SECRET).update(body).digest('hex');
    expect(signBody(body, SECRET)).toBe(`sha256=${expected}`);
    expect(verifyBody(body, SECRET, `sha256=${expected}`)).toBe(true);
    expect(verifyBody(`${body} `, SECRET, `sha256=${expected}`)).toBe(false);
    expect(verifyBody(body, `${SECRET}x`, `sha256=${expected}`)).toBe(false);
    expect(verifyBody(body, SECRET, 'sha256=00')).toBe(false);
  });
});

describe('webhook body', () => {
  it('puts the delivery id, type and time first, then the fields, with a fresh id per event', () => {
    const at = new Date('2026-03-01T04:05:06.007Z');
    const event = { type: 'evolution.swapped', report: 'r', from_version: 1, to_version: 2 } as const;
    const a = webhookDelivery(event, at);
    const b = webhookDelivery(event, at);
    expect(a.id).not.toBe(b.id);
    expect(Object.keys(JSON.parse(webhookBody(a)) as object)).toEqual([
      'id',
      'type',
      'occurred_at',
      'report',
      'from_version',
      'to_version',
    ]);
    expect(a.occurred_at).toBe('2026-03-01T04:05:06.007Z');
  });
});

describe('a webhook answer', () => {
  it('2xx is delivered', () => {
    expect(outcomeOf(204, undefined, '', SECRET)).toEqual({ ok: true, status: 204 });
  });

  it('5xx and 429 are retried, with Retry-After as a floor', () => {
    expect(outcomeOf(503, undefined, 'down', SECRET)).toEqual({
      ok: false,
      retry: true,
      reason: 'the webhook answered HTTP 503: down',
    });
    expect(outcomeOf(429, '7', '', SECRET)).toMatchObject({ ok: false, retry: true, retryAfterMs: 7_000 });
  });

  it('any other status fails for good, the secret redacted from the reason', () => {
    expect(outcomeOf(400, undefined, `bad ${SECRET}`, SECRET)).toEqual({
      ok: false,
      retry: false,
      reason: 'the webhook answered HTTP 400: bad [REDACTED]',
    });
    expect(outcomeOf(301, undefined, '', SECRET)).toMatchObject({ retry: false });
  });
});

describe('freshness transition', () => {
  it('announces a first late and every change, never a first fresh or a repeat', () => {
    expect(transition(null, 'late')).toBe('late');
    expect(transition(null, 'fresh')).toBeUndefined();
    expect(transition('late', 'late')).toBeUndefined();
    expect(transition('late', 'fresh')).toBe('fresh');
    expect(transition('fresh', 'late')).toBe('late');
    expect(transition('fresh', 'fresh')).toBeUndefined();
  });
});
