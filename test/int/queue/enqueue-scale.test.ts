// A big backfill is enqueued chunk by chunk, drawing the plan as it goes, and each waiting pull
// costs little Redis memory. Sizes, not times: the machine running the tests is shared.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { loadConfig } from '../../../src/platform/config/env.js';
import { backfillPulls, type PlannedPull } from '../../../src/plan/pulls.js';
import { countBackfill } from '../../helpers/plan.js';
import { enqueueStream, type EnqueueCounts, ENQUEUE_CHUNK } from '../../../src/schedule/enqueue.js';
import { openQueues, type Queues } from '../../../src/platform/queue/queues.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { flushPrefix } from '../../helpers/pipeline.js';

/** The budget of Redis memory per waiting pull. */
const MAX_BYTES_PER_PULL = 1536;
const REPORTS = Array.from(
  { length: 20 },
  (_, i) =>
    ({ name: `daily_geo_device_${String(i).padStart(2, '0')}`, period: 'day' }) as unknown as ReportJob,
);
// 20 reports x 1,000 days: 20,000 pulls.
const FROM = '2023-01-01';
const TO = '2025-09-26';

let prefix: string;
let queues: Queues;
let redis: Redis;

beforeAll(async () => {
  prefix = testPrefix();
  queues = await openQueues(
    loadConfig({
      REDIS_URL,
      ADOPS_QUEUE_PREFIX: prefix,
      ADOPS_BASE_URL: 'http://127.0.0.1:1/v2',
      ADOPS_API_KEY: 'k',
    }),
  );
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await queues?.close();
  redis?.disconnect();
  if (prefix !== undefined) await flushPrefix(prefix);
});

/** Bytes Redis holds under the prefix: MEMORY USAGE of every key, lists and streams counted whole. */
async function bytesUnder(p: string): Promise<{ bytes: number; keys: number }> {
  let bytes = 0;
  let keys = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${p}:*`, 'COUNT', 1000);
    cursor = next;
    const pipe = redis.pipeline();
    for (const k of found) pipe.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
    for (const [error, n] of (await pipe.exec()) ?? []) {
      if (error !== null) throw error;
      bytes += Number(n);
      keys++;
    }
  } while (cursor !== '0');
  return { bytes, keys };
}

describe('an enqueue of 20,000 pulls', () => {
  it('streams in chunks from a generator, and each waiting pull takes at most 1.5 KB of Redis', async () => {
    const total = countBackfill(REPORTS, FROM, TO);
    expect(total).toBe(20_000);
    let drawn = 0;
    function* counted(): Generator<PlannedPull> {
      for (const p of backfillPulls(REPORTS, FROM, TO)) {
        drawn++;
        yield p;
      }
    }
    const seen: Array<{ done: EnqueueCounts; drawn: number; waiting: number }> = [];
    const waiting: Array<Promise<number>> = [];
    const result = await enqueueStream(queues.pulls, counted(), {
      onChunk: (done) => {
        seen.push({ done, drawn, waiting: -1 });
        waiting.push(queues.pulls.getWaitingCount());
      },
    });
    expect(result).toEqual({ added: total, alreadyQueued: 0 });
    // No pulls kept without `keep`: the result is counts only.
    expect('pulls' in result).toBe(false);
    // One report of progress per chunk, each after exactly one more chunk was drawn from the plan:
    // the plan is never read ahead of what is already in Redis by more than a chunk.
    expect(seen).toHaveLength(total / ENQUEUE_CHUNK);
    seen.forEach((s, i) => {
      expect(s.done.added).toBe((i + 1) * ENQUEUE_CHUNK);
      expect(s.drawn).toBe((i + 1) * ENQUEUE_CHUNK);
    });
    // The queue grew chunk by chunk while the enqueue went on.
    const counts = await Promise.all(waiting);
    expect(counts[0]).toBeGreaterThanOrEqual(ENQUEUE_CHUNK);
    expect(counts[0]).toBeLessThan(total);
    expect(counts.at(-1)).toBe(total);

    expect(await queues.pulls.getWaitingCount()).toBe(total);
    const { bytes, keys } = await bytesUnder(prefix);
    // A job hash and a deduplication key per pull, plus the queue's few shared keys.
    expect(keys).toBeGreaterThanOrEqual(2 * total);
    expect(bytes / total).toBeLessThanOrEqual(MAX_BYTES_PER_PULL);
  });

  it('a second enqueue of the same plan adds nothing while the first waits', async () => {
    const again = await enqueueStream(queues.pulls, backfillPulls(REPORTS, '2025-09-01', TO), {
      keep: true,
    });
    expect([again.added, again.alreadyQueued]).toEqual([0, 26 * 20]);
    expect(again.pulls).toHaveLength(26 * 20);
  });
});
