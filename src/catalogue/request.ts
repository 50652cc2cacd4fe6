// How one request of a sync survives the API: 429s wait out Retry-After through the shared pause,
// transient faults are retried with capped jittered backoff. Only the request that met a fault
// pays for it; the sync's progress never does.
import type { ApiClientOptions } from '../api/client.js';
import type { Config } from '../config/env.js';
import { realSleep } from '../api/http.js';
import { backoffDelay } from '../retry/classify.js';
import { classifyFailure } from '../retry/classify.js';
import type { RequestGate } from '../api/shared-limit.js';

/** How hard a sync's request tries. */
export interface SyncRetryPolicy {
  /**
   * Attempts per request against transient faults (5xx, dropped connections, timeouts), the first
   * included. 12: a server failing 28% of requests transiently (25% 5xx and 3% drops, the
   * `hostile` profile) fails 12 in a row with p = 0.28^12 = 2.3e-7, so a 250-campaign sync
   * (about 255 requests) exhausts one with p = 6e-5 and a 20,000-campaign one with p = 5e-3;
   * even then the sync's next try resumes from its checkpoint. With the default 250 ms base and
   * 30 s cap, the backoff of a request that needs all 12 is at most 152 s (76 s on average).
   */
  readonly attempts: number;
  /** 429s one request waits out before the sync gives up and goes back to the queue. */
  readonly rateLimitWaits: number;
  /** Base and cap of the backoff between attempts (the one backoff, src/retry/backoff.ts). */
  readonly baseMs: number;
  readonly maxMs: number;
}

export const SYNC_RETRY: SyncRetryPolicy = { attempts: 12, rateLimitWaits: 30, baseMs: 250, maxMs: 30_000 };

/** The policy as configured: ADOPS_SYNC_ATTEMPTS and the backoff cap ADOPS_HTTP_MAX_BACKOFF_MS. */
export function syncRetryFromConfig(config: Pick<Config, 'queue' | 'http'>): Partial<SyncRetryPolicy> {
  return { attempts: config.queue.syncAttempts, maxMs: config.http.maxBackoffMs };
}

/** Counters of one sync's requests, for progress and the closing log line. */
export interface RequestCounts {
  requests: number;
  retries: number;
  rateLimited: number;
}

/** Sends one request of the sync, retried as the policy allows. */
export type Requester = <T>(call: () => Promise<T>) => Promise<T>;

/**
 * The client options a sync's API client needs: one HTTP attempt per call and 429s thrown, so
 * the requester alone decides retries (and counts them), and every attempt through `gate`.
 */
export function syncClientOptions(gate: RequestGate): Partial<ApiClientOptions> {
  return {
    attempts: 1,
    on429: 'throw',
    beforeRequest: async () => {
      await gate.acquire();
    },
  };
}

/**
 * A requester over `gate`. A 429 pauses the gate for its Retry-After (every process sharing the
 * gate waits with it) and the same request is sent again, without spending an attempt; a
 * transient failure (src/retry/classify.ts) is retried after a jittered backoff up to `policy.attempts` attempts; any
 * other error is thrown at once. `counts` is updated as requests go.
 */
export function createRequester(
  gate: RequestGate,
  policy: SyncRetryPolicy,
  counts: RequestCounts,
  options: { random?: () => number; sleep?: (ms: number) => Promise<void> } = {},
): Requester {
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => realSleep(ms));
  return async <T>(call: () => Promise<T>): Promise<T> => {
    let failures = 0;
    let waits = 0;
    for (;;) {
      counts.requests++;
      try {
        return await call();
      } catch (error) {
        const failure = classifyFailure(error);
        if (failure.kind === 'rate-limited' && waits < policy.rateLimitWaits) {
          waits++;
          counts.rateLimited++;
          await gate.pause(failure.retryAfterMs);
          continue;
        }
        if (failure.kind !== 'transient') throw error;
        failures++;
        if (failures >= policy.attempts) throw error;
        counts.retries++;
        await sleep(backoffDelay(failures, policy, random));
      }
    }
  };
}
