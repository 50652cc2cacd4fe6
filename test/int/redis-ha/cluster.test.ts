// A real 3-master Redis Cluster started by the test: the queues, the workers, the shared request
// limit and the CLI's status and heal all run on it, with every key of ours in one hash slot.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { limiterKey } from '../../../src/limits/limiter.js';
import { createRequestLimiter } from '../../../src/limits/redis.js';
import { startDashboard } from '../../../src/cli/dashboard.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { closeConnection, workerConnection } from '../../../src/platform/queue/connection.js';
import { REPORT_QUEUE } from '../../../src/platform/queue/jobs.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { command, startRedisCluster, unusedPort, type RedisClusterFixture } from '../../helpers/redis-ha.js';
import {
  createHarness,
  lastDays,
  snapshot,
  unreconciledCount,
  type Harness,
} from '../../helpers/pipeline.js';
import { adops, loadedPerPeriod, referenceRun, totalsRows } from './common.js';

const DAYS = 7;
const range = lastDays(DAYS);

let cluster: RedisClusterFixture;
let reference: Record<string, unknown[]>;
beforeAll(async () => {
  [cluster, reference] = await Promise.all([startRedisCluster(), referenceRun(range.from, range.to)]);
});
afterAll(async () => {
  await cluster?.stop();
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A harness whose config points at the cluster (REDIS_URL emptied: set together they are refused). */
const clusterHarness = () =>
  // A request per period (ADOPS_DAYS_PER_REQUEST): these cases count pulls.
  createHarness({ env: { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.env, ADOPS_DAYS_PER_REQUEST: '1' } });

/** Every key of each master, by node port. */
async function keysByNode(): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const n of cluster.nodes) out.set(n.port, (await command(n.port, 'KEYS', '*')) as string[]);
  return out;
}

describe('Redis Cluster', () => {
  it('a backfill with a worker on a 3-master cluster loads every period exactly once, equal to a single-Redis run', async () => {
    h = await clusterHarness();
    expect(h.config.redis.kind).toBe('cluster');
    expect(h.config.queue.prefix).toBe(`{${h.prefix}}`);
    await h.worker({ concurrency: 4 });
    const { pulls } = await enqueueBackfill(
      h.queues.pulls,
      h.jobs.reports,
      range.from,
      range.to,
      'newest-first',
      h.config.accounts,
    );
    expect(pulls.length).toBe(h.jobs.reports.length * DAYS);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 100 });
    expect(result.failed).toEqual([]);
    expect(await snapshot(h.db.pool, h.jobs)).toEqual(reference);
    expect(await unreconciledCount(h.db.pool)).toBe(0);
    const perPeriod = await loadedPerPeriod(h);
    expect(perPeriod).toHaveLength(pulls.length);
    expect(perPeriod.every((n) => n === 1)).toBe(true);
    expect(await totalsRows(h)).toBe(pulls.length);

    // The queue really lived on the cluster: every key of ours on the one master owning the
    // prefix's slot, none on the shared Redis.
    const byNode = await keysByNode();
    const ours = [...byNode].map(([port, keys]) => [
      port,
      keys.filter((k) => k.startsWith(`{${h!.prefix}}:`)),
    ]);
    const holding = ours.filter(([, keys]) => (keys as string[]).length > 0);
    expect(holding).toHaveLength(1);
    const slots = new Set(
      await Promise.all(
        (holding[0]![1] as string[])
          .slice(0, 50)
          .map(async (k) => Number(await command(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', k))),
      ),
    );
    expect(slots.size).toBe(1);
    const shared = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      expect(await shared.keys(`*${h.prefix}*`)).toEqual([]);
    } finally {
      shared.disconnect();
    }

    // status reads the queue counts from the cluster; heal finds nothing to do.
    const status = await adops(['status', '--days', String(DAYS), '--json'], h.env);
    expect(status.err).toBe('');
    const parsed = JSON.parse(status.out) as {
      reports: Array<{ loaded: number }>;
      queues: Record<string, { completed: number }> | null;
      queueError?: string;
    };
    expect(parsed.queueError).toBeUndefined();
    expect(parsed.queues?.['report-pulls']?.completed).toBe(pulls.length);
    for (const r of parsed.reports) expect(r.loaded).toBe(DAYS);
    const heal = await adops(['heal', '--days', String(DAYS), '--dry-run'], h.env);
    expect(heal.code).toBe(0);
    expect(heal.out).toMatch(/^0 pulls would heal/m);

    // The dashboard reads the same queues from the cluster.
    const dashboard = await startDashboard({
      redis: h.config.redis,
      prefix: h.config.queue.prefix,
      port: 0,
      host: '127.0.0.1',
      readOnly: true,
    });
    try {
      const url = `${dashboard.url}api/queues?activeQueue=${REPORT_QUEUE}&status=completed&page=1&jobsPerPage=10`;
      const body = (await (await fetch(url)).json()) as {
        queues: Array<{ name: string; counts: { completed: number } }>;
      };
      expect(body.queues.find((q) => q.name === REPORT_QUEUE)?.counts.completed).toBe(pulls.length);
    } finally {
      await dashboard.close();
    }
  });

  it('a CLI command names the cluster nodes when none answers, never the password', async () => {
    const [a, b] = [await unusedPort(), await unusedPort()];
    const r = await adops(
      ['backfill', '--report', 'daily_zone', '--from', '2026-01-01', '--to', '2026-01-01'],
      {
        REDIS_CLUSTER_NODES: `127.0.0.1:${a},127.0.0.1:${b}`,
        REDIS_PASSWORD: 'hunter2-cluster-secret',
      },
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(
        `^adops: Redis at Cluster 127\\.0\\.0\\.1:${a},127\\.0\\.0\\.1:${b} is not reachable \\(.*\\): check REDIS_CLUSTER_NODES and REDIS_PASSWORD`,
      ),
    );
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err + r.out).not.toMatch(/hunter2/);
  });

  it('the shared request limit counts and pauses across processes on the cluster', async () => {
    h = await clusterHarness();
    const a = workerConnection(h.config);
    const b = workerConnection(h.config);
    const errors: unknown[] = [];
    const key = limiterKey(h.config.queue.prefix);
    const first = createRequestLimiter(a, key, 3, { onError: (e) => errors.push(e), subscribe: true });
    const paused: number[] = [];
    const second = createRequestLimiter(b, key, 3, {
      onError: (e) => errors.push(e),
      subscribe: true,
      onPause: (ms) => paused.push(ms),
    });
    try {
      await Promise.all([first.ready(), second.ready()]);
      // Three a second across both: the fourth request of a window waits for the next one.
      const windows = await Promise.all([1, 2, 3, 4].map((i) => (i % 2 === 0 ? first : second).acquire()));
      expect(errors).toEqual([]);
      expect(windows.every((w) => w >= 0)).toBe(true);
      expect(new Set(windows).size).toBe(2);
      // A 429 met by one process pauses the other, told through the cluster's pub/sub.
      await first.pause(1_500);
      await expect.poll(() => paused.length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(errors).toEqual([]);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await Promise.all([closeConnection(a), closeConnection(b)]);
    }
  });
});
