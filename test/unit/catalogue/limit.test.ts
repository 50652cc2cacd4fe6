import { describe, expect, it } from 'vitest';
import { mapLimit } from '../../../src/catalogue/read.js';

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
