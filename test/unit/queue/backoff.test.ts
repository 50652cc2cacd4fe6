import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../../src/queue/backoff.js';

const policy = { baseMs: 1_000, maxMs: 10_000 };

describe('retryDelayMs', () => {
  it('doubles per attempt between half and all of the exponential step', () => {
    expect(retryDelayMs(1, policy, () => 0)).toBe(500);
    expect(retryDelayMs(1, policy, () => 0.999999)).toBe(1_000);
    expect(retryDelayMs(3, policy, () => 0)).toBe(2_000);
    expect(retryDelayMs(3, policy, () => 0.5)).toBe(3_000);
  });

  it('never exceeds the cap, even after many attempts', () => {
    for (const n of [5, 10, 50, 1_000])
      expect(retryDelayMs(n, policy, () => 0.999999)).toBeLessThanOrEqual(10_000);
  });

  it('waits at least the Retry-After the server asked for', () => {
    expect(retryDelayMs(1, policy, () => 0, 7_500)).toBe(7_500);
    expect(retryDelayMs(5, policy, () => 1 - 1e-9, 100)).toBe(10_000);
  });
});
