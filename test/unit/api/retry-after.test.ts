import { describe, expect, it } from 'vitest';
import { createLocalGate } from '../../../src/limits/limiter.js';
import { parseRetryAfter } from '../../../src/api/http.js';

describe('Retry-After', () => {
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

  it('reads a Retry-After far in the future as it is: the client caps it, not the parser', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(parseRetryAfter('999999999', now)).toBe(999_999_999_000);
    expect(parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', now)).toBe(Date.UTC(2100, 0, 1) - now);
    // Not delta-seconds (RFC 9110: digits only) nor a date: unreadable, so the usual backoff applies.
    expect(parseRetryAfter('1e23', now)).toBeUndefined();
  });
});

describe('a pause longer than a timer can hold', () => {
  it('is waited out without a TimeoutOverflowWarning, and ends when the gate is stopped', async () => {
    const warnings: string[] = [];
    const listen = (w: Error) => warnings.push(w.name);
    process.on('warning', listen);
    const stop = new AbortController();
    try {
      const gate = createLocalGate(stop.signal);
      await gate.pause(2 ** 40);
      let done = false;
      const waiting = gate.acquire().then(() => (done = true));
      // A timer past 2^31-1 ms fires after 1 ms with a warning, and the wait would spin on it:
      // a few rounds of the event loop show it.
      for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 2));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      expect(done).toBe(false);
      stop.abort();
      await waiting;
    } finally {
      process.off('warning', listen);
    }
  });
});
