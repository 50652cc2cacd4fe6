// A rate limit on API requests shared by every worker process: a per-second counter in Redis.
// BullMQ's own limiter counts jobs, but one pull can make several requests (retries), and the
// API's limit is on requests.
import type { Redis } from 'ioredis';

// KEYS[1]: counter key base. ARGV[1]: max per window, ARGV[2]: window ms.
// Redis' clock decides the window, so workers on machines with skewed clocks still agree.
// Returns {0, window number} when a slot was taken, else {ms until the window ends, window number}.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local slot = math.floor(now / window)
local key = KEYS[1] .. ':' .. slot
local n = redis.call('INCR', key)
if n == 1 then redis.call('PEXPIRE', key, window * 2) end
if n <= tonumber(ARGV[1]) then return {0, slot} end
return {(slot + 1) * window - now, slot}
`;

export interface RequestLimiter {
  /**
   * Resolves when this process may send one more API request, with the number of the one-second
   * window whose slot it took (-1 when Redis failed and the request goes unlimited).
   */
  acquire(): Promise<number>;
}

/**
 * A limiter allowing `perSecond` requests per second across every process that shares `redis`
 * and `key`. Waiters retry at the next window; a Redis failure lets the request through (the
 * API's own 429 handling still protects it) rather than stopping all work.
 */
export function createRequestLimiter(
  redis: Redis,
  key: string,
  perSecond: number,
  onError: (error: unknown) => void = () => undefined,
): RequestLimiter {
  return {
    async acquire() {
      for (;;) {
        let wait: number;
        let slot: number;
        try {
          const answer = (await redis.eval(TAKE, 1, key, String(perSecond), '1000')) as [number, number];
          wait = Number(answer[0]);
          slot = Number(answer[1]);
        } catch (error) {
          onError(error);
          return -1;
        }
        if (wait <= 0) return slot;
        // A little spread so waiters do not stampede the next window together.
        await new Promise((r) => setTimeout(r, wait + Math.floor(Math.random() * 20)));
      }
    },
  };
}

/** The Redis key base of the shared request limit under a BullMQ prefix. */
export function limiterKey(prefix: string): string {
  return `${prefix}:adops:api-requests`;
}
