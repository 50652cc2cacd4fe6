// What every API request passes through: a slot of the rate limit, and the pause after a 429.

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

/** Sleeps until the local clock reaches `at` (ms since the epoch). */
export async function sleepUntil(at: number): Promise<void> {
  const ms = at - Date.now();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}

/**
 * A gate for one process without Redis (`adops sync --direct`): no rate limit, and a pause that
 * holds this process' requests only.
 */
export function createLocalGate(): RequestGate {
  let pausedUntil = 0;
  return {
    async acquire() {
      while (Date.now() < pausedUntil) await sleepUntil(pausedUntil);
    },
    async pause(ms) {
      pausedUntil = Math.max(pausedUntil, Date.now() + Math.max(0, ms));
    },
  };
}
