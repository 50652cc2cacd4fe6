// A sync's requests and its bounded concurrency (src/catalogue/read.ts).
import { describe, expect, it } from 'vitest';
import { apiHttpError, apiResponseError, rateLimitedError } from '../../../src/api/errors.js';
import {
  type RequestCounts,
  type SyncRetryPolicy,
  createRequester,
  mapLimit,
} from '../../../src/catalogue/read.js';

const d = { apiMessage: undefined, method: 'GET', path: '/v2/campaigns', attempts: 1, hint: 'h' };
const http500 = () => apiHttpError({ ...d, status: 500, retryable: true });
const http404 = () => apiHttpError({ ...d, status: 404, retryable: false });
const limited = (ms: number) => rateLimitedError({ ...d, status: 429, retryable: true, retryAfterMs: ms });
const policy: SyncRetryPolicy = { attempts: 4, rateLimitWaits: 3, baseMs: 100, maxMs: 1_000 };

/** A requester over a gate that records its pauses, sleeping no real time. */
function setup(p = policy) {
  const pauses: number[] = [];
  const sleeps: number[] = [];
  const counts: RequestCounts = { requests: 0, retries: 0, rateLimited: 0 };
  const gate = { acquire: async () => undefined, pause: async (ms: number) => void pauses.push(ms) };
  const request = createRequester(gate, p, counts, {
    random: () => 0.5,
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { request, pauses, sleeps, counts };
}

/** A call failing with the given errors in turn, then answering 'ok'. */
function failing(...errors: Error[]) {
  let i = 0;
  return async () => {
    const e = errors[i++];
    if (e !== undefined) throw e;
    return 'ok';
  };
}

describe('a sync request', () => {
  it('waits out each 429 through the gate and sends the same request again, spending no attempt', async () => {
    const { request, pauses, sleeps, counts } = setup();
    const call = failing(limited(1_025), http500(), limited(2_000), http500(), http500());
    expect(await request(call)).toBe('ok');
    expect(pauses).toEqual([1_025, 2_000]);
    // Three 500s, within 4 attempts: ceilings 100, 200, 400; with random 0.5 the equal-jitter
    // backoff waits three quarters of each.
    expect(sleeps).toEqual([75, 150, 300]);
    expect(counts).toEqual({ requests: 6, retries: 3, rateLimited: 2 });
  });

  it('gives up after the attempts on transient faults, with the last error', async () => {
    const { request, counts } = setup();
    await expect(request(failing(http500(), http500(), http500(), http500()))).rejects.toMatchObject({
      name: 'ApiHttpError',
    });
    expect(counts.requests).toBe(4);
  });

  it('throws the 429 once its waits are spent, so the queue can take over', async () => {
    const { request, pauses } = setup();
    await expect(request(failing(limited(1), limited(1), limited(1), limited(1)))).rejects.toMatchObject({
      name: 'RateLimitedError',
    });
    expect(pauses).toHaveLength(3);
  });

  it('never retries what cannot succeed: a 404, a bad body, a bug', async () => {
    for (const error of [
      http404(),
      apiResponseError({ ...d, status: 200, retryable: false, problem: 'not JSON', excerpt: '<html>' }),
      new TypeError('bug'),
    ]) {
      const { request, counts } = setup();
      await expect(request(failing(error))).rejects.toBe(error);
      expect(counts.requests).toBe(1);
    }
  });
});

describe('mapLimit', () => {
  it('never runs more than the limit at once and keeps the order of results', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      for (let i = 0; i < n; i++) await Promise.resolve();
      running--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(2);
  });

  it('starts nothing after the first failure and rejects once the calls in flight settle', async () => {
    const started: number[] = [];
    let settled = 0;
    const run = mapLimit([0, 1, 2, 3, 4], 2, async (n) => {
      started.push(n);
      await new Promise((r) => setImmediate(r));
      settled++;
      if (n === 0) throw new Error('boom');
      return n;
    });
    await expect(run).rejects.toThrow('boom');
    expect(started).toEqual([0, 1]);
    expect(settled).toBe(2);
  });

  it('refuses a limit below one', async () => {
    await expect(mapLimit([1], 0, async (n) => n)).rejects.toThrow(RangeError);
  });
});
