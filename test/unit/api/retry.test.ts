import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  isRetryableStatus,
  isRetryableTransport,
  parseRetryAfter,
} from '../../../src/api/retry.js';

describe('retry policy', () => {
  it('retries only 500, 502, 503 and 504 among statuses', () => {
    for (const s of [500, 502, 503, 504]) expect(isRetryableStatus(s)).toBe(true);
    for (const s of [200, 400, 401, 403, 404, 409, 422, 429, 501, 505])
      expect(isRetryableStatus(s)).toBe(false);
  });

  it('retries resets and timeouts, but POST only when the request never reached the server', () => {
    expect(isRetryableTransport('ECONNRESET', 'GET')).toBe(true);
    expect(isRetryableTransport('UND_ERR_HEADERS_TIMEOUT', 'PUT')).toBe(true);
    expect(isRetryableTransport('UND_ERR_SOCKET', 'DELETE')).toBe(true);
    expect(isRetryableTransport('ECONNRESET', 'POST')).toBe(false);
    expect(isRetryableTransport('ECONNREFUSED', 'POST')).toBe(true);
    expect(isRetryableTransport('UND_ERR_INVALID_ARG', 'GET')).toBe(false);
    expect(isRetryableTransport(undefined, 'GET')).toBe(false);
  });

  it('full-jitter backoff stays within [0, min(cap, base * 2^(retry-1))]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (retry, base, cap, r) => {
          const d = backoffDelay(retry, base, cap, () => r);
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThanOrEqual(Math.min(cap, base * 2 ** (retry - 1)));
          expect(Number.isInteger(d)).toBe(true);
        },
      ),
    );
    expect(backoffDelay(1, 100, 10_000, () => 0.999)).toBe(99);
    expect(backoffDelay(4, 100, 10_000, () => 0.5)).toBe(400);
    expect(backoffDelay(30, 100, 10_000, () => 0.5)).toBe(5000);
    expect(backoffDelay(3, 100, 10_000, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(['2', '3'], now)).toBe(2000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
