// The request limit all workers share: API requests per second and a 429 pause, over a store all reach
// (redis.ts or postgres.ts; its clock decides). Not BullMQ's limiter: that counts jobs, not requests.
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_RETRY_AFTER_CAP_MS, MAX_TIMER_MS } from '../platform/retry/classify.js';

/** Share of a second's limit one process takes from the store at a time (at least one slot). */
const BATCH_SHARE = 1 / 20;

export interface RequestLimiter extends RequestGate {
  /** After any pause, resolves to the one-second window whose slot it took (-1: the store failed, unlimited). */
  acquire(): Promise<number>;
  /** Resolves once this process listens for other processes' pauses (at once without `subscribe`). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface LimiterOptions {
  /** Called when the store fails; the request is then let through. */
  readonly onError?: (error: unknown) => void;
  /** Hear other processes' pauses at once on a second connection; without it a pause is seen at the next
   * refill, and the slots held for this second (a twentieth of the limit at most) may still be spent. */
  readonly subscribe?: boolean;
  /** Told when this process learns of a pause, its own or another's (ms left). */
  readonly onPause?: (ms: number) => void;
  /** Longest pause (default 15 minutes, ADOPS_MAX_RETRY_AFTER_SECONDS); a longer one is cut to it. */
  readonly maxPauseMs?: number;
  /** The worker's shutdown: once it aborts nothing waits, so a paused pull goes on to its request, which
   * the same abort ends (the pull goes back to the queue). */
  readonly stop?: AbortSignal;
}

/** [slots taken (0 when none are left), window number, ms until the window ends, 0]; while a pause
 * runs [0, -1, ms until it ends, 1]. */
export type TakeAnswer = readonly [taken: number, window: number, leftMs: number, paused: number];

/** Where the limit's slots and pause live, shared by every process: Redis or Postgres. */
export interface LimitStore {
  /** Takes up to `want` of the window's `max` slots; a pause running longer than `longestMs` is cut to it. */
  take(max: number, windowMs: number, want: number, longestMs: number): Promise<TakeAnswer>;
  /** Extends the pause to `ms` from now unless a longer one runs, tells listeners; the ms left. */
  pause(ms: number): Promise<number>;
  /** Listens for other processes' pauses (ms): `ready` once listening (or failed), `close` stops. */
  listen(
    onPause: (ms: number) => void,
    onError: (error: unknown) => void,
  ): { readonly ready: Promise<void>; close(): Promise<void> };
}

/** `perSecond` requests a second across all processes sharing `store`; each takes a twentieth of the limit
 * at a time for its window (unused slots are lost: undershot, never exceeded). A store failure lets requests
 * through (the API's 429 still guards it) rather than stopping all work. `pause(ms)` holds every process. */
export function limiterOver(
  store: LimitStore,
  perSecond: number,
  options: LimiterOptions | ((error: unknown) => void) = {},
): RequestLimiter {
  const o: LimiterOptions = typeof options === 'function' ? { onError: options } : options;
  const onError = o.onError ?? (() => undefined);
  const batch = Math.max(1, Math.floor(perSecond * BATCH_SHARE));
  const maxPause = Math.min(o.maxPauseMs ?? DEFAULT_RETRY_AFTER_CAP_MS, MAX_TIMER_MS);
  const stopped = () => o.stop?.aborted === true;
  // Slots of window `slot` held by this process, usable until `until` (local clock).
  let held = { slot: -1, count: 0, until: 0 };
  // The end of the pause in force as this process knows it (local clock).
  let pausedUntil = 0;
  // One refill at a time: concurrent callers wait for it instead of each taking a batch.
  let refilling: Promise<number> | undefined;

  const pausedFor = (asked: number) => {
    if (!Number.isFinite(asked) || asked <= 0) return;
    const ms = Math.min(asked, maxPause);
    if (Date.now() + ms > pausedUntil) o.onPause?.(ms);
    pausedUntil = Math.max(pausedUntil, Date.now() + ms);
    // Slots held from before the pause must not be spent during it.
    held = { slot: -1, count: 0, until: 0 };
  };

  const listener = o.subscribe === true ? store.listen(pausedFor, onError) : undefined;

  /** Takes slots from the store: resolves to 0 when some are held now, else to the ms to wait. */
  async function refill(): Promise<number> {
    const [taken, slot, left, paused] = await store.take(perSecond, 1000, batch, maxPause);
    if (paused === 1) {
      pausedFor(left);
      return left;
    }
    if (taken <= 0) return left;
    held = { slot, count: taken, until: Date.now() + left };
    return 0;
  }

  return {
    async acquire() {
      for (;;) {
        if (stopped()) return -1;
        if (Date.now() < pausedUntil) {
          await sleepUntil(pausedUntil, o.stop);
          continue;
        }
        if (held.count > 0 && Date.now() < held.until) {
          held.count--;
          return held.slot;
        }
        let wait: number;
        try {
          refilling ??= refill().finally(() => (refilling = undefined));
          wait = await refilling;
        } catch (error) {
          onError(error);
          return -1;
        }
        // A little spread so waiters do not stampede the next window together.
        if (wait > 0) await sleepUntil(Date.now() + wait + Math.floor(Math.random() * 20), o.stop);
      }
    },
    async pause(ms) {
      const wanted = Math.min(maxPause, Math.max(1, Math.ceil(ms)));
      pausedFor(wanted);
      try {
        pausedFor(await store.pause(wanted));
      } catch (error) {
        // The local pause still holds this process; the others meet their own 429s.
        onError(error);
      }
    },
    ready: () => listener?.ready ?? Promise.resolve(),
    close: async () => listener?.close(),
  };
}

/** The limit's key under a BullMQ prefix, per account (no pause holds another's); `default`'s is the old. */
export function limiterKey(prefix: string, account?: string): string {
  return account === undefined || account === 'default'
    ? `${prefix}:adops:api-requests`
    : `${prefix}:adops:api-requests:${account}`;
}

/** Admission of API requests: the shared limiter in workers, a local pause elsewhere. */
export interface RequestGate {
  /** Resolves when one more request may be sent (after any pause in force). */
  acquire(): Promise<unknown>;
  /** Holds every request through this gate for `ms` (a Retry-After); a running pause is never shortened. */
  pause(ms: number): Promise<void>;
}

/** Sleeps until `at` (local clock) or `stop` aborts, in steps of MAX_TIMER_MS (a longer timer would spin). */
export async function sleepUntil(at: number, stop?: AbortSignal): Promise<void> {
  for (let ms = at - Date.now(); ms > 0 && stop?.aborted !== true; ms = at - Date.now()) {
    try {
      await delay(Math.min(ms, MAX_TIMER_MS), undefined, stop === undefined ? undefined : { signal: stop });
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'AbortError') throw error;
    }
  }
}

/** A gate for one process (`adops sync --direct`): no rate limit, a local pause; none once `stop` aborts. */
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
