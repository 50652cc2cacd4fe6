// The request limit's Redis store (limiter.ts has the limit): a per-second counter and the pause,
// in two scripts, and pauses told to every process on the pause key's channel.
import type { Cluster, Redis } from 'ioredis';
import { limiterOver, type LimiterOptions, type LimitStore, type RequestLimiter } from './limiter.js';

// KEYS: counter key base, pause key. ARGV: max per window, window ms, slots wanted, longest pause (a longer
// one is cut to it). Answers a TakeAnswer; Redis' clock decides, so skewed workers agree. The window's key
// is built from KEYS[1], whose prefix is a hash tag: on a Cluster it lands in KEYS[1]'s slot, as required.
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

// KEYS[1]: pause key (also the channel), ARGV[1]: ms. Extends the pause unless a longer one runs,
// tells the other processes on the channel, and returns the ms the pause in force has left.
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

/** limiterOver's limiter for every process that shares `redis` and `key`. */
export function createRequestLimiter(
  redis: Redis | Cluster,
  key: string,
  perSecond: number,
  options: LimiterOptions | ((error: unknown) => void) = {},
): RequestLimiter {
  return limiterOver(redisStore(redis, key), perSecond, options);
}

function redisStore(redis: Redis | Cluster, key: string): LimitStore {
  const pauseKey = `${key}:pause`;
  return {
    take: async (max, windowMs, want, longestMs) =>
      takeAnswer(await redis.eval(TAKE, 2, key, pauseKey, max, windowMs, want, longestMs)),
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

/** The TAKE script's answer as numbers; anything else reads as "no slot, try in a second". */
function takeAnswer(answer: unknown): [number, number, number, number] {
  const [taken = 0, slot = -1, left = 1000, paused = 0] = Array.isArray(answer) ? answer.map(Number) : [];
  return [taken, slot, left, paused];
}
