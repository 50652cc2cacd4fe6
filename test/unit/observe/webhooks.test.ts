import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { transition } from '../../../src/worker/webhook-worker.js';
import { outcomeOf, signWebhook, webhookHeaders } from '../../../src/webhooks/delivery.js';
import { webhookDelivery } from '../../../src/webhooks/events.js';

const SECRET = `whsec_${Buffer.from('0123456789abcdef01234567').toString('base64')}`;

describe('webhook signature', () => {
  it("matches the Standard Webhooks specification's example signature", () => {
    // The spec's test vector (and its libraries' tests): a 24-byte key, the shortest allowed.
    expect(
      signWebhook(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs id, timestamp and exact bytes as the standardwebhooks library does, which verifies the headers', () => {
    const body = '{"id":"d-1","type":"report.late","report":"r \u00e9"}';
    const at = new Date('2026-03-01T04:05:06.789Z');
    const headers = webhookHeaders(SECRET, 'd-1', body, at);
    expect(headers).toEqual({
      'webhook-id': 'd-1',
      'webhook-timestamp': '1772337906',
      'webhook-signature': new Webhook(SECRET).sign('d-1', new Date(1772337906_000), body),
    });
    // Every part is signed: another id, second or byte gives another signature.
    const sig = headers['webhook-signature'];
    expect(signWebhook(SECRET, 'd-2', 1772337906, body)).not.toBe(sig);
    expect(signWebhook(SECRET, 'd-1', 1772337907, body)).not.toBe(sig);
    expect(signWebhook(SECRET, 'd-1', 1772337906, `${body} `)).not.toBe(sig);
    expect(signWebhook(SECRET, 'd-1', 1772337906, Buffer.from(body))).toBe(sig);
  });
});

describe('webhook body', () => {
  it('puts the delivery id, type and time first, then the fields, with a fresh id per event', () => {
    const at = new Date('2026-03-01T04:05:06.007Z');
    const event = { type: 'evolution.swapped', report: 'r', from_version: 1, to_version: 2 } as const;
    const a = webhookDelivery(event, at);
    const b = webhookDelivery(event, at);
    expect(a.id).not.toBe(b.id);
    expect(Object.keys(JSON.parse(JSON.stringify(a)) as object)).toEqual([
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
