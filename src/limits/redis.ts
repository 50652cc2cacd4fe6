// A rate limit on API requests shared by every worker process: a per-second counter in Redis (or
// Postgres: limits/postgres.ts), and a pause every process honours after a 429. BullMQ's
// own limiter counts jobs, but one pull can make several requests (retries), a sync hundreds, and
// the API's limit is on requests.
import type { Cluster, Redis } from 'ioredis';
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_RETRY_AFTER_CAP_MS, MAX_TIMER_MS } from '../platform/retry/classify.js';

// KEYS[1]: counter key base, KEYS[2]: pause key. ARGV[1]: max per window, ARGV[2]: window ms,
// ARGV[3]: slots wanted, ARGV[4]: longest pause. Redis' clock decides the window and the pause, so
// workers on machines with skewed clocks still agree. A pause running longer than ARGV[4] (set by
// a process that obeyed a Retry-After of decades) is cut to it. While a pause runs, returns
// {0, -1, ms until it ends, 1}; else
// takes up to ARGV[3] of the window's slots that are left and returns
// {slots taken (0 when none are left), window number, ms until the window ends, 0}.
// The window's key is built here from KEYS[1]; on a Redis Cluster the queue prefix is a hash tag
// ({prefix}), so it lands in KEYS[1]'s slot, which a cluster requires of every key a script uses.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
local longest = tonumber(ARGV[4])
if paused > now + longest then
  paused = now + longest
  redis.call('SET', KEYS[2], paused, 'PX', longest)
end
if paused > now then return {0, -1, paused - now, 1} end
local window = tonumber(ARGV[2])
local slot = math.floor(now / window)
local key = KEYS[1] .. ':' .. slot
local left = (slot + 1) * window - now
local taken = math.min(tonumber(ARGV[3]), tonumber(ARGV[1]) - tonumber(redis.call('GET', key) or '0'))
if taken <= 0 then return {0, slot, left, 0} end
if redis.call('INCRBY', key, taken) == taken then redis.call('PEXPIRE', key, window * 2) end
return {taken, slot, left, 0}
`;

// KEYS[1]: pause key (also the channel). ARGV[1]: pause ms. Extends the pause to now + ARGV[1]
// unless one already runs longer (a shorter 429 never shortens a pause), tells the other processes
// on the channel, and returns the ms the pause in force has left.
const PAUSE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if now + ms <= current then return current - now end
redis.call('SET', KEYS[1], now + ms, 'PX', ms)
redis.call('PUBLISH', KEYS[1], ms)
return ms
`;

/** Share of a second's limit one process takes from Redis at a time (at least one slot). */
const BATCH_SHARE = 1 / 20;

export interface RequestLimiter extends RequestGate {
  /**
   * Resolves when this process may send one more API request, with the number of the one-second
   * window whose slot it took (-1 when Redis failed and the request goes unlimited). Waits out a
   * pause first.
   */
  acquire(): Promise<number>;
  /** Resolves once this process listens for other processes' pauses (at once without `subscribe`). */
  ready(): Promise<void>;
  /** Stops listening for other processes' pauses (the subscriber connection). */
  close(): Promise<void>;
}

export interface LimiterOptions {
  /** Called when Redis fails; the request is then let through. */
  readonly onError?: (error: unknown) => void;
  /**
   * Listen on a second connection for pauses set by other processes, so they take effect here at
   * once. Without it a pause is seen at this process' next refill from Redis: slots it already
   * holds for the current second (a twentieth of the limit at most) may still be spent.
   */
  readonly subscribe?: boolean;
  /** Told when this process learns of a pause, its own or another's (ms left). */
  readonly onPause?: (ms: number) => void;
  /**
   * Longest pause (default 15 minutes: ADOPS_MAX_RETRY_AFTER_SECONDS): a longer one, asked here
   * or found in Redis, is cut to it.
   */
  readonly maxPauseMs?: number;
  /**
   * The worker's shutdown deadline: once it aborts nothing waits any more, so a pull held by a
   * pause goes on to its request, which the same abort ends (the pull goes back to the queue).
   */
  readonly stop?: AbortSignal;
}

/**
 * Where the limit's slots and pause live, shared by every process: Redis (below) or Postgres
 * (limits/postgres.ts). Its clock decides the windows and the pause.
 */
export interface LimitStore {
  /**
   * Takes up to `want` of the window's `max` slots: [slots taken (0 when none are left), window
   * number, ms until the window ends, 0]; while a pause runs [0, -1, ms until it ends, 1]. A pause
   * running longer than `longestMs` is cut to it.
   */
  take(max: number, windowMs: number, want: number, longestMs: number): Promise<number[]>;
  /** Extends the pause to `ms` from now unless a longer one runs, tells listeners; the ms left. */
  pause(ms: number): Promise<number>;
  /** Listens for other processes' pauses (ms): `ready` once listening (or failed), `close` stops. */
  listen(
    onPause: (ms: number) => void,
    onError: (error: unknown) => void,
  ): { readonly ready: Promise<void>; close(): Promise<void> };
}

/**
 * A limiter allowing `perSecond` requests per second across every process that shares `redis`
 * and `key`. A process takes its slots from Redis a few at a time (a twentieth of the limit, and
 * one at a time under 40 a second) and hands them out locally until its window ends, so a high
 * limit does not cost a Redis call per request; slots taken and left unused are lost with their
 * window, so the limit can be undershot, never exceeded. Waiters retry at the next window; a
 * Redis failure lets the request through (the API's own 429 handling still protects it) rather
 * than stopping all work. `pause(ms)` (after a 429) holds every process' requests until it ends.
 */
export function createRequestLimiter(
  redis: Redis | Cluster,
  key: string,
  perSecond: number,
  options: LimiterOptions | ((error: unknown) => void) = {},
): RequestLimiter {
  return limiterOver(redisStore(redis, key), perSecond, options);
}

/** The Redis store: the scripts above, and pauses heard on the pause key's channel. */
function redisStore(redis: Redis | Cluster, key: string): LimitStore {
  const pauseKey = `${key}:pause`;
  return {
    take: async (max, windowMs, want, longestMs) =>
      ((await redis.eval(TAKE, 2, key, pauseKey, max, windowMs, want, longestMs)) as unknown[]).map(Number),
    pause: async (ms) => Number(await redis.eval(PAUSE, 1, pauseKey, String(ms))),
    listen(onPause, onError) {
      const subscriber = redis.duplicate();
      subscriber.on('error', () => undefined);
      subscriber.on('message', (_channel: string, message: string) => onPause(Number(message)));
      // Closed before the subscription was made (a worker that stops while starting): nothing to say.
      let closed = false;
      const ready = subscriber.subscribe(pauseKey).then(
        () => undefined,
        (error: unknown) => (closed ? undefined : onError(error)),
      );
      return {
        ready,
        async close() {
          closed = true;
          if (subscriber.status !== 'end') subscriber.disconnect();
        },
      };
    },
  };
}

/** The limiter over any store: slots handed out locally a batch at a time, pauses held locally. */
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
    const answer = await store.take(perSecond, 1000, batch, maxPause);
    const [taken, slot, left, paused] = answer as [number, number, number, number];
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

/**
 * The Redis key base of the shared request limit under a BullMQ prefix: one per account, so one
 * account's 429 pause or spent budget never holds another's requests. The default account (and a
 * call without one) keeps the key of releases before accounts.
 */
export function limiterKey(prefix: string, account?: string): string {
  return account === undefined || account === 'default'
    ? `${prefix}:adops:api-requests`
    : `${prefix}:adops:api-requests:${account}`;
}

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
