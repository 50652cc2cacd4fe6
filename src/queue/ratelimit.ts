// A rate limit on API requests shared by every worker process: a per-second counter in Redis.
// BullMQ's own limiter counts jobs, but one pull can make several requests (retries), and the
// API's limit is on requests.
import type { Redis } from 'ioredis';

// KEYS[1]: counter key base. ARGV[1]: max per window, ARGV[2]: window ms, ARGV[3]: slots wanted.
// Redis' clock decides the window, so workers on machines with skewed clocks still agree.
// Takes up to ARGV[3] of the window's slots that are left and returns
// {slots taken (0 when none are left), window number, ms until the window ends}.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local slot = math.floor(now / window)
local key = KEYS[1] .. ':' .. slot
local left = (slot + 1) * window - now
local taken = math.min(tonumber(ARGV[3]), tonumber(ARGV[1]) - tonumber(redis.call('GET', key) or '0'))
if taken <= 0 then return {0, slot, left} end
if redis.call('INCRBY', key, taken) == taken then redis.call('PEXPIRE', key, window * 2) end
return {taken, slot, left}
`;

/** Share of a second's limit one process takes from Redis at a time (at least one slot). */
const BATCH_SHARE = 1 / 20;

export interface RequestLimiter {
  /**
   * Resolves when this process may send one more API request, with the number of the one-second
   * window whose slot it took (-1 when Redis failed and the request goes unlimited).
   */
  acquire(): Promise<number>;
}

/**
 * A limiter allowing `perSecond` requests per second across every process that shares `redis`
 * and `key`. A process takes its slots from Redis a few at a time (a twentieth of the limit, and
 * one at a time under 40 a second) and hands them out locally until its window ends, so a high
 * limit does not cost a Redis call per request; slots taken and left unused are lost with their
 * window, so the limit can be undershot, never exceeded. Waiters retry at the next window; a
 * Redis failure lets the request through (the API's own 429 handling still protects it) rather
 * than stopping all work.
 */
export function createRequestLimiter(
  redis: Redis,
  key: string,
  perSecond: number,
  onError: (error: unknown) => void = () => undefined,
): RequestLimiter {
  const batch = Math.max(1, Math.floor(perSecond * BATCH_SHARE));
  // Slots of window `slot` held by this process, usable until `until` (local clock).
  let held = { slot: -1, count: 0, until: 0 };
  // One refill at a time: concurrent callers wait for it instead of each taking a batch.
  let refilling: Promise<number> | undefined;

  /** Takes slots from Redis: resolves to 0 when some are held now, else to the ms to wait. */
  async function refill(): Promise<number> {
    const answer = (await redis.eval(TAKE, 1, key, String(perSecond), '1000', String(batch))) as number[];
    const [taken, slot, left] = answer.map(Number) as [number, number, number];
    if (taken <= 0) return left;
    held = { slot, count: taken, until: Date.now() + left };
    return 0;
  }

  return {
    async acquire() {
      for (;;) {
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
        if (wait > 0) await new Promise((r) => setTimeout(r, wait + Math.floor(Math.random() * 20)));
      }
    },
  };
}

/** The Redis key base of the shared request limit under a BullMQ prefix. */
export function limiterKey(prefix: string): string {
  return `${prefix}:adops:api-requests`;
}
