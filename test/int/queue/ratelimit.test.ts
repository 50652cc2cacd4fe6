// The shared request limit on real Redis: several processes' limiters share one budget.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { limiterKey, type RequestLimiter } from '../../../src/limits/limiter.js';
import { createRequestLimiter } from '../../../src/limits/redis.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

const connections: Redis[] = [];
const limiters: RequestLimiter[] = [];
afterEach(async () => {
  for (const l of limiters.splice(0)) await l.close();
  for (const c of connections.splice(0)) c.disconnect();
});

/** A limiter on its own real connection, closed after the test. */
function limiterOn(
  key: string,
  perSecond: number,
  options: { subscribe?: boolean; onPause?: (ms: number) => void } = {},
): RequestLimiter {
  const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  connections.push(c);
  const limiter = createRequestLimiter(c, key, perSecond, options);
  limiters.push(limiter);
  return limiter;
}

/** Milliseconds `acquire()` of `limiter` takes. */
async function timed(limiter: RequestLimiter): Promise<number> {
  const t = performance.now();
  await limiter.acquire();
  return performance.now() - t;
}

describe('the shared request limit', () => {
  it('never grants more than the limit per second across limiters on separate connections', async () => {
    const key = limiterKey(testPrefix());
    const perSecond = 4;
    // Two "workers", each with its own connection, asking for 7 requests at once.
    const limiters = [0, 1].map(() => {
      const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      connections.push(c);
      return createRequestLimiter(c, key, perSecond);
    });
    const slots = await Promise.all(limiters.flatMap((l) => Array.from({ length: 7 }, () => l.acquire())));
    const perWindow = new Map<number, number>();
    for (const s of slots) perWindow.set(s, (perWindow.get(s) ?? 0) + 1);
    expect(slots.every((s) => s >= 0)).toBe(true);
    expect([...perWindow.values()].every((n) => n <= perSecond)).toBe(true);
    // 14 requests at 4 a second need at least 4 windows.
    expect(perWindow.size).toBeGreaterThanOrEqual(4);
  });

  /** Two limiters on their own real connections, each counting its Redis calls. */
  function countedLimiters(key: string, perSecond: number) {
    const calls = [0, 0];
    const limiters = calls.map((_, i) => {
      const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      connections.push(c);
      const real = c.eval.bind(c);
      vi.spyOn(c, 'eval').mockImplementation((...args: Parameters<Redis['eval']>) => {
        calls[i] = (calls[i] ?? 0) + 1;
        return real(...args);
      });
      return createRequestLimiter(c, key, perSecond);
    });
    return { limiters, calls };
  }

  it('holds the limit when slots are taken from Redis several at a time', async () => {
    const { limiters } = countedLimiters(limiterKey(testPrefix()), 40); // two slots per call
    const slots = await Promise.all(limiters.flatMap((l) => Array.from({ length: 50 }, () => l.acquire())));
    const perWindow = new Map<number, number>();
    for (const s of slots) perWindow.set(s, (perWindow.get(s) ?? 0) + 1);
    expect(slots.every((s) => s >= 0)).toBe(true);
    expect([...perWindow.values()].every((n) => n <= 40)).toBe(true);
    expect(perWindow.size).toBeGreaterThanOrEqual(3);
  });

  it('asks Redis once per twentieth of the limit, not once per request', async () => {
    const { limiters, calls } = countedLimiters(limiterKey(testPrefix()), 2_000); // 100 slots per call
    const slots = await Promise.all(limiters.flatMap((l) => Array.from({ length: 150 }, () => l.acquire())));
    expect(slots.every((s) => s >= 0)).toBe(true);
    // 150 slots 100 at a time: 2 calls each, 1 more if a window ends between them.
    for (const n of calls) expect(n).toBeLessThanOrEqual(3);
  });

  it('lets requests through, unlimited, when Redis fails, and says so', async () => {
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    connections.push(c);
    await c.quit();
    const errors: unknown[] = [];
    const limiter = createRequestLimiter(c, limiterKey(testPrefix()), 1, (e) => errors.push(e));
    expect(await limiter.acquire()).toBe(-1);
    expect(errors).toHaveLength(1);
  });

  it('holds every process sharing the limit through a pause, and a shorter pause never shortens it', async () => {
    const key = limiterKey(testPrefix());
    const [a, b] = [limiterOn(key, 100), limiterOn(key, 100)];
    await a.pause(400);
    await a.pause(50);
    // b never heard of the pause: Redis tells it at its first refill.
    const [waitedA, waitedB] = await Promise.all([timed(a), timed(b)]);
    expect(waitedA).toBeGreaterThanOrEqual(350);
    expect(waitedB).toBeGreaterThanOrEqual(350);
    expect(waitedB).toBeLessThan(1_500);
    // Over: requests flow again without waiting.
    expect(await timed(b)).toBeLessThan(100);
  });

  it('stops a subscribed process from spending slots it already holds as soon as another pauses', async () => {
    const key = limiterKey(testPrefix());
    // 400 a second: b takes 20 slots per refill, so without the message it would not ask Redis again.
    let told!: (ms: number) => void;
    const heard = new Promise<number>((r) => (told = r));
    const [a, b] = [limiterOn(key, 400), limiterOn(key, 400, { subscribe: true, onPause: (ms) => told(ms) })];
    await Promise.all([b.ready(), b.acquire()]);
    await a.pause(500);
    expect(await heard).toBe(500);
    expect(await timed(b)).toBeGreaterThanOrEqual(400);
  });

  it('cuts a pause Redis holds beyond the cap (an older worker obeyed a huge Retry-After) down to it', async () => {
    const key = limiterKey(testPrefix());
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    connections.push(c);
    const [seconds] = await c.time();
    await c.set(`${key}:pause`, String(Number(seconds) * 1000 + 999_999_999_000), 'PX', 999_999_999_000);
    const limiter = createRequestLimiter(c, key, 100, { maxPauseMs: 300 });
    limiters.push(limiter);
    const waited = await timed(limiter);
    expect(waited).toBeGreaterThan(100);
    expect(waited).toBeLessThan(5_000);
    expect(await c.pttl(`${key}:pause`)).toBeLessThanOrEqual(300);
  });
});
