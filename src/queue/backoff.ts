// Retry spacing of failed pulls: pure, so the maths is unit tested without Redis.

/** Name of our backoff strategy in job options (BullMQ calls settings.backoffStrategy for it). */
export const BACKOFF_TYPE = 'adops-jitter';

export interface BackoffPolicy {
  /** Delay before the first retry. */
  readonly baseMs: number;
  /** Cap of any one delay. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 5 * 60_000 };

/**
 * Delay before retry number `attemptsMade` (1 after the first failure): exponential from baseMs,
 * capped at maxMs, with "equal jitter" (half fixed, half random) so workers that failed together
 * do not retry together, while no delay collapses to zero. `random` returns [0, 1).
 * A server's Retry-After, when known, is a floor.
 */
export function retryDelayMs(
  attemptsMade: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
  retryAfterMs?: number,
): number {
  const n = Math.max(1, Math.floor(attemptsMade));
  // 2^30 already exceeds any sane cap; clamping the exponent keeps the maths finite.
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 30));
  const jittered = Math.round(exp / 2 + (random() * exp) / 2);
  return Math.max(jittered, Math.ceil(retryAfterMs ?? 0));
}
