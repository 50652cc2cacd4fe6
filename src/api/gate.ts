// What every API request passes through: a slot of the rate limit, and the pause after a 429.
import { setTimeout as delay } from 'node:timers/promises';
import { MAX_TIMER_MS } from '../retry/backoff.js';

/** Admission of API requests: the shared limiter in workers, a local pause elsewhere. */
export interface RequestGate {
  /** Resolves when one more request may be sent (after any pause in force). */
  acquire(): Promise<unknown>;
  /**
   * Holds every request through this gate for `ms` (the API's Retry-After), or longer when a
   * longer pause already runs: a pause is never shortened.
   */
  pause(ms: number): Promise<void>;
}

/**
 * Sleeps until the local clock reaches `at` (ms since the epoch), or until `stop` aborts. A wait
 * longer than a Node timer holds is slept in steps of MAX_TIMER_MS, never as one timer that would
 * fire at once and spin.
 */
export async function sleepUntil(at: number, stop?: AbortSignal): Promise<void> {
  for (let ms = at - Date.now(); ms > 0 && stop?.aborted !== true; ms = at - Date.now()) {
    try {
      await delay(Math.min(ms, MAX_TIMER_MS), undefined, stop === undefined ? undefined : { signal: stop });
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'AbortError') throw error;
    }
  }
}

/**
 * A gate for one process without Redis (`adops sync --direct`): no rate limit, and a pause that
 * holds this process' requests only. Once `stop` aborts, nothing waits any more.
 */
export function createLocalGate(stop?: AbortSignal): RequestGate {
  let pausedUntil = 0;
  return {
    async acquire() {
      while (Date.now() < pausedUntil && stop?.aborted !== true) await sleepUntil(pausedUntil, stop);
    },
    async pause(ms) {
      pausedUntil = Math.max(pausedUntil, Date.now() + Math.max(0, ms));
    },
  };
}
