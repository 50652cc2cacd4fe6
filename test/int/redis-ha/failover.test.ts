// A Sentinel failover mid-backfill on real processes: a master, its replica and two sentinels
// started by each test. The master is SIGKILLed while two workers pull; Sentinel promotes the
// replica, the workers reconnect through the sentinels and go on, and `adops heal` re-plans from
// Postgres whatever the old master took with it. The warehouse must end exact, nothing doubled.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enqueueBackfill } from '../../../src/schedule/enqueue.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { command, startSentinels, waitUntil, type SentinelFixture } from '../../helpers/redis-ha.js';
import {
  createHarness,
  lastDays,
  snapshot,
  unreconciledCount,
  type Harness,
} from '../../helpers/pipeline.js';
import { adops, loadedPerPeriod, referenceRun, totalsRows } from './common.js';

const DAYS = 24;
const range = lastDays(DAYS);

let reference: Record<string, unknown[]>;
beforeAll(async () => {
  reference = await referenceRun(range.from, range.to);
});

let sentinel: SentinelFixture | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await sentinel?.stop();
  sentinel = undefined;
});

/** A harness on a fresh master, replica and sentinel pair, with 2 workers of 2 jobs each. */
async function sentinelHarness(): Promise<{ s: SentinelFixture; h: Harness }> {
  sentinel = await startSentinels();
  h = await createHarness({
    // Slow enough that the kill lands mid-backfill.
    faults: { latencyMs: [30, 80], paths: ['/v2/reports'] },
    env: {
      ...{ REDIS_URL: '', REDIS_SENTINELS: sentinel.env, REDIS_SENTINEL_MASTER: sentinel.name },
      ADOPS_DAYS_PER_REQUEST: '1', // a request per period: these cases count pulls
    },
  });
  expect(h.config.redis.kind).toBe('sentinel');
  expect(await sentinel.masterPort()).toBe(sentinel.master.port);
  await Promise.all([h.worker({ concurrency: 2 }), h.worker({ concurrency: 2 })]);
  return { s: sentinel, h };
}

/** Periods loaded so far (distinct report and period). */
async function loadedPeriods(harness: Harness): Promise<number> {
  const { rows } = await harness.db.pool.query<{ n: string }>(
    `SELECT count(DISTINCT (report, period_start)) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
  );
  return Number(rows[0]?.n);
}

const promoted = (s: SentinelFixture) =>
  waitUntil('Sentinel promoting the replica', async () => (await s.masterPort()) === s.replica.port, 20_000);

/** Waits until the new master's queue holds no unfinished pull (commands fail while it reconnects). */
const drained = (harness: Harness) =>
  waitUntil(
    'the queue drained on the new master',
    async () =>
      (await harness.queues.pulls.getJobCountByTypes('waiting', 'delayed', 'active', 'prioritized')) === 0,
    40_000,
    200,
  );

/** After heal: the warehouse equals the single-Redis run, each period loaded once. */
async function expectExact(harness: Harness, pulls: number): Promise<void> {
  expect(await snapshot(harness.db.pool, harness.jobs)).toEqual(reference);
  expect(await unreconciledCount(harness.db.pool)).toBe(0);
  expect(await totalsRows(harness)).toBe(pulls);
  const perPeriod = await loadedPerPeriod(harness);
  expect(perPeriod).toHaveLength(pulls);
  expect(perPeriod.every((n) => n === 1)).toBe(true);
}

describe('Redis Sentinel', () => {
  it('a CLI command fails at once with one line naming the sentinels and what to check, never the password', async () => {
    sentinel = await startSentinels();
    const base = { REDIS_PASSWORD: 'hunter2-data-secret' };
    const args = ['backfill', '--report', 'daily_zone', '--from', '2026-01-01', '--to', '2026-01-01'];
    const unknown = await adops(args, {
      ...base,
      REDIS_SENTINELS: sentinel.env,
      REDIS_SENTINEL_MASTER: 'nope',
    });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(
      /^adops: Redis at Sentinel master "nope" via 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+ is not reachable \(.*\): the sentinels monitor no master named "nope": check REDIS_SENTINEL_MASTER/,
    );
    const gone = sentinel.sentinels[0]!.port;
    await Promise.all(sentinel.sentinels.map((n) => n.kill()));
    const down = await adops(args, {
      REDIS_URL: `redis+sentinel://:hunter2-url-secret@127.0.0.1:${gone}/${sentinel.name}`,
    });
    expect(down.code).toBe(1);
    expect(down.err).toMatch(
      new RegExp(
        `^adops: Redis at Sentinel master "${sentinel.name}" via 127\\.0\\.0\\.1:${gone} is not reachable .*: check REDIS_SENTINELS`,
      ),
    );
    for (const r of [unknown, down]) {
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err + r.out).not.toMatch(/hunter2/);
    }
  });

  it('the master SIGKILLed while 2 workers pull: the replica is promoted, the workers go on, and after heal every period is exact and loaded once', async () => {
    const { s, h } = await sentinelHarness();
    const { pulls } = await enqueueBackfill(
      h.queues.pulls,
      h.jobs.reports,
      range.from,
      range.to,
      'newest-first',
      h.config.accounts,
    );
    expect(pulls.length).toBe(h.jobs.reports.length * DAYS);

    await waitUntil('a part of the backfill loaded', async () => (await loadedPeriods(h)) >= 15, 30_000, 50);
    await s.master.kill();
    const atKill = await loadedPeriods(h);
    expect(atKill).toBeLessThan(pulls.length / 2);
    await promoted(s);
    // The workers reconnect to the new master and drain the queue it holds: far more periods
    // load than the 4 that can have been running at the kill.
    await drained(h);
    expect(await loadedPeriods(h)).toBeGreaterThan(atKill + 4);

    const heal = await adops(['heal', '--days', String(DAYS), '--wait'], h.env);
    expect(heal.err).not.toMatch(/failed:/);
    expect(heal.code).toBe(0);
    expect(heal.out).toMatch(/enqueued \d+ pulls/);
    await expectExact(h, pulls.length);
  });

  it('pulls enqueued on the master but never replicated are lost with it, and heal re-plans exactly those from Postgres', async () => {
    const { s, h } = await sentinelHarness();
    const split = addDays(range.from, DAYS / 2);
    const first = await enqueueBackfill(
      h.queues.pulls,
      h.jobs.reports,
      range.from,
      addDays(split, -1),
      'newest-first',
      h.config.accounts,
    );
    await waitUntil('a part of the backfill loaded', async () => (await loadedPeriods(h)) >= 10, 30_000, 50);
    // Hold the workers (the pause replicates) so no job finishes in the window the replica misses.
    await h.queues.pulls.pause();
    await waitUntil(
      'the running pulls finished',
      async () => (await h.queues.pulls.getActiveCount()) === 0,
      20_000,
    );
    // The replica stops hearing the master: what the master acknowledges from now on is not
    // replicated, as when a master dies with its replication stream unsent.
    process.kill(s.replica.pid, 'SIGSTOP');
    let lost;
    try {
      await command(s.master.port, 'CLIENT', 'KILL', 'TYPE', 'replica');
      lost = await enqueueBackfill(
        h.queues.pulls,
        h.jobs.reports,
        split,
        range.to,
        'newest-first',
        h.config.accounts,
      );
      expect(lost.added).toBe(h.jobs.reports.length * (DAYS / 2));
      await s.master.kill();
    } finally {
      process.kill(s.replica.pid, 'SIGCONT');
    }
    await promoted(s);
    await waitUntil(
      'the queue resumed on the new master',
      async () => (await h.queues.pulls.resume(), true),
      20_000,
    );
    await drained(h);
    // The first half is loaded; the second half went down with the old master.
    expect(await loadedPeriods(h)).toBe(first.pulls.length);

    const heal = await adops(['heal', '--days', String(DAYS), '--wait'], h.env);
    expect(heal.err).not.toMatch(/failed:/);
    expect(heal.code).toBe(0);
    expect(heal.out).toContain(`enqueued ${lost.pulls.length} pulls`);
    await expectExact(h, first.pulls.length + lost.pulls.length);
  });
});
