// The shared request limit on real Redis: several processes' limiters share one budget.
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createRequestLimiter, limiterKey } from '../../../src/queue/ratelimit.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

const connections: Redis[] = [];
afterEach(() => {
  for (const c of connections.splice(0)) c.disconnect();
});

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

  it('lets requests through, unlimited, when Redis fails, and says so', async () => {
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    connections.push(c);
    await c.quit();
    const errors: unknown[] = [];
    const limiter = createRequestLimiter(c, limiterKey(testPrefix()), 1, (e) => errors.push(e));
    expect(await limiter.acquire()).toBe(-1);
    expect(errors).toHaveLength(1);
  });
});
