// Redis lost mid-backfill (restarted empty, or our keys flushed), then `heal`: the warehouse is the
// record of what is loaded, so every period must end exact and none twice.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { enqueueBackfill, enqueuePulls, readHealPlan, waitForPulls } from '../../../src/schedule/enqueue.js';
import { ensureReady } from '../../../src/platform/queue/connection.js';
import { warehouseOf, qualified } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { flushPrefix, startPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/reliability/redis-server.js';
import {
  EACH_PERIOD,
  FROM,
  HEAL_DAYS,
  HEAL_NOW,
  openSuite,
  reportRequests,
  TO,
  type Suite,
} from '../../helpers/reliability/suite.js';
import { verify } from '../../helpers/reliability/truth.js';

let suite: Suite;
let privateRedis: PrivateRedis | undefined;
const book = figureBook('redis-loss');
const TOTAL = 12;

beforeAll(async () => {
  suite = await openSuite();
});
afterAll(async () => {
  book.flush(inject('runId'));
  await privateRedis?.stop();
  await suite?.close();
});

/**
 * Backfills with slow report answers, runs `lose` once a few pulls are done, then heals and waits:
 * the worker must resume on its own and the heal must pull exactly what is missing.
 */
async function loseRedisMidBackfill(o: {
  id: string;
  title: string;
  injected: string;
  redisUrl?: string;
  lose: (p: Pipeline, prefix: string) => Promise<string>;
}) {
  const started = Date.now();
  const { db, env, prefix } = await suite.newCase();
  const caseEnv = o.redisUrl === undefined ? env : { ...env, REDIS_URL: o.redisUrl };
  suite.emulator.resetStats();
  suite.emulator.setFaults({ latencyMs: 120, paths: ['/v2/reports'] });
  const p = await startPipeline({
    env: caseEnv,
    pool: db.pool,
    jobs: suite.jobs,
    stall: { lockDurationMs: 2_000, stalledIntervalMs: 500 },
  });
  try {
    const { pulls } = await enqueueBackfill(
      p.queues.pulls,
      suite.reports,
      FROM,
      TO,
      'newest-first',
      EACH_PERIOD,
    );
    const stop = new AbortController();
    await waitForPulls(p.queues.pulls, pulls, {
      pollMs: 20,
      signal: stop.signal,
      onProgress: (pr) => {
        if (pr.done >= 3) stop.abort();
      },
    });
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${qualified(TEST_SCHEMA, 'report_loads')} WHERE status = 'loaded'`,
    );
    const loadedBefore = rows[0]?.n ?? 0;
    const what = await o.lose(p, prefix);
    suite.emulator.setFaults({});
    const redis = p.queues.backend.redis;
    if (redis === undefined) throw new Error('a Redis outage needs the Redis queue');
    await ensureReady(redis, p.config.redis, 20_000);
    const plan = await readHealPlan(
      warehouseOf(db.pool, TEST_SCHEMA),
      suite.reports,
      HEAL_DAYS,
      HEAL_NOW,
      EACH_PERIOD,
    );
    const heal = await enqueuePulls(p.queues.pulls, plan);
    const healed = await waitForPulls(p.queues.pulls, heal, {
      pollMs: 50,
      signal: AbortSignal.timeout(40_000),
    });
    const verdict = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    book.add({
      id: o.id,
      title: o.title,
      injected: o.injected,
      periodsExact: verdict.exact,
      periodsTotal: verdict.total,
      duplicates: verdict.duplicates,
      retries: reportRequests(suite.emulator) - TOTAL,
      failedAsExpected: 0,
      notes: `${loadedBefore} periods loaded before the loss (${what}); heal enqueued ${heal.length}, ${healed.completed.length} completed`,
      ms: Date.now() - started,
    });
    expect(loadedBefore).toBeLessThan(TOTAL); // the loss really was mid-backfill
    expect(heal.length).toBeGreaterThan(0);
    expect(healed.failed).toEqual([]);
    expect(healed.completed).toHaveLength(heal.length);
    expect(verdict.problems).toEqual([]);
    expect(verdict).toMatchObject({ exact: TOTAL, total: TOTAL, duplicates: 0 });
  } finally {
    suite.emulator.setFaults({});
    await p.close();
    suite.logLines.push(...p.lines);
  }
}

describe('losing the queue mid-backfill costs time, not data', () => {
  it('Redis killed and restarted empty: the worker reconnects and heal completes every period once', async () => {
    privateRedis = await startPrivateRedis();
    const server = privateRedis;
    await loseRedisMidBackfill({
      id: 'redis/restart',
      title: 'Redis restarted mid-backfill, then heal',
      injected: 'redis-server SIGKILLed (no persistence) after 3 pulls, started again empty',
      redisUrl: server.url,
      lose: async (_p, prefix) => {
        suite.extraRedis.push({ url: server.url, prefix });
        await server.crash();
        await server.start();
        return 'redis-server killed and restarted';
      },
    });
  });

  it("the queue's keys flushed: heal rebuilds the plan from the warehouse", async () => {
    await loseRedisMidBackfill({
      id: 'redis/flush',
      title: 'Redis keys flushed mid-backfill, then heal',
      injected: 'every key under the BullMQ prefix deleted after 3 pulls',
      lose: async (_p, prefix) => `${await flushPrefix(prefix)} keys deleted`,
    });
  });
});

describe('the API key', () => {
  it('appears in no log line, Redis key or value (private Redis included), or database dump', async () => {
    const scans = await suite.scan();
    expect(scans.flatMap((s) => s.found)).toEqual([]);
  });
});
