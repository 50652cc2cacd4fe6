// The one backoff: how long to wait before retry number n, for HTTP requests, queued jobs and
// Postgres transactions alike. Pure, so the maths is unit tested without any server.

/**
 * The longest delay a Node timer holds (2^31-1 ms, 24.8 days): a longer one fires at once, with a
 * TimeoutOverflowWarning, and a wait on it spins. Every wait whose length comes from outside is
 * cut to it (and waited out again if need be).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Default longest pause a server's Retry-After can impose (ADOPS_MAX_RETRY_AFTER_SECONDS). */
export const DEFAULT_RETRY_AFTER_CAP_MS = 15 * 60_000;

/** Name of our backoff strategy in job options (BullMQ calls settings.backoffStrategy for it). */
export const BACKOFF_TYPE = 'adops-jitter';

export interface BackoffPolicy {
  /** Delay ceiling of the first retry. */
  readonly baseMs: number;
  /** Cap of any one delay. */
  readonly maxMs: number;
}

/** Queued pulls: 2 s, doubling, at most 5 minutes. */
export const JOB_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 5 * 60_000 };
/** Webhook deliveries: 5 s, doubling, at most 15 minutes; 10 attempts span about half an hour. */
export const WEBHOOK_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 15 * 60_000 };
/** A Postgres transaction that lost a deadlock or a serialization race: 100 ms, at most 1 s. */
export const PG_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 1_000 };

/**
 * Delay before retry number `retry` (1 = the wait before the second attempt): exponential from
 * `baseMs`, capped at `maxMs`, with "equal jitter": half of it fixed, half random, so callers that
 * failed together do not come back together, and no delay collapses to zero. A server's
 * Retry-After, when known, is a floor. `random` returns [0, 1).
 */
export function backoffDelay(
  retry: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
  floorMs = 0,
): number {
  const n = Math.max(1, Math.floor(retry));
  // 2^40 already exceeds any sane cap; clamping the exponent keeps the maths finite.
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 40));
  const jittered = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  return Math.max(jittered, Math.ceil(floorMs));
}
