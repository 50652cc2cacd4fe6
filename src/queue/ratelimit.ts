// A rate limit on API requests shared by every worker process: a per-second counter in Redis.
// BullMQ's own limiter counts jobs, but one pull can make several requests (retries), and the
// API's limit is on requests.
import type { Redis } from 'ioredis';

// KEYS[1]: counter key base. ARGV[1]: max per window, ARGV[2]: window ms.
// Redis' clock decides the window, so workers on machines with skewed clocks still agree.
// Returns 0 when a slot was taken, else the ms until the window ends.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local slot = math.floor(now / window)
local key = KEYS[1] .. ':' .. slot
local n = redis.call('INCR', key)
if n == 1 then redis.call('PEXPIRE', key, window * 2) end
if n <= tonumber(ARGV[1]) then return 0 end
return (slot + 1) * window - now
`;

export interface RequestLimiter {
  /** Resolves when this process may send one more API request. */
  acquire(): Promise<void>;
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
        try {
          wait = Number(await redis.eval(TAKE, 1, key, String(perSecond), '1000'));
        } catch (error) {
          onError(error);
          return;
        }
        if (wait <= 0) return;
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
