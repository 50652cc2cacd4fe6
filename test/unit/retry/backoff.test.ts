import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/platform/retry/classify.js';

const policy = { baseMs: 1_000, maxMs: 10_000 };

describe('backoffDelay', () => {
  it('doubles per attempt between half and all of the exponential step', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(500);
    expect(backoffDelay(1, policy, () => 0.999999)).toBe(1_000);
    expect(backoffDelay(3, policy, () => 0)).toBe(2_000);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(3_000);
  });

  it('stays within [step / 2, step] for any attempt, base and cap, step = min(cap, base * 2^(n-1))', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (retry, baseMs, maxMs, r) => {
          const step = Math.min(maxMs, baseMs * 2 ** (retry - 1));
          const d = backoffDelay(retry, { baseMs, maxMs }, () => r);
          expect(d).toBeGreaterThanOrEqual(Math.floor(step / 2));
          expect(d).toBeLessThanOrEqual(Math.ceil(step));
          expect(Number.isInteger(d)).toBe(true);
        },
      ),
    );
  });

  it('never exceeds the cap, even after many attempts', () => {
    for (const n of [5, 10, 50, 1_000])
      expect(backoffDelay(n, policy, () => 0.999999)).toBeLessThanOrEqual(10_000);
  });

  it('waits at least the Retry-After the server asked for', () => {
    expect(backoffDelay(1, policy, () => 0, 7_500)).toBe(7_500);
    expect(backoffDelay(5, policy, () => 1 - 1e-9, 100)).toBe(10_000);
  });
});
