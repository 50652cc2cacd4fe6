// `adops backfill --wait` (and the waits that share its loop) while the Redis it waits on goes
// away: stopped for 3 s and started again (one server, or the Cluster master holding the queue),
// switched by a Sentinel failover, or gone for good. The
// command is the real CLI in a child process; the Redis servers are the test's own, never the
// shared one.
//
// "Stopped for 3 s" is a private redis-server stopped with SIGTERM, as `systemctl stop`, `docker
// stop` and `redis-cli shutdown` stop it, and started again on the same port with its append-only
// file: the queue survives, as it does on any Redis with persistence, so the workers find their jobs
// afterwards. SIGSTOP would not model it: the connections would stay open and every command would
// simply wait, which is a slow Redis, not an absent one.
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import {
  command,
  startRedisCluster,
  startSentinels,
  waitUntil,
  type RedisClusterFixture,
  type SentinelFixture,
} from '../../helpers/redis-ha.js';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/reliability/redis-server.js';
import { createHarness, lastDays, unreconciledCount, type Harness } from '../../helpers/pipeline.js';
import { loadedPerPeriod, totalsRows } from './common.js';

const DAYS = 4;
const range = lastDays(DAYS);

let h: Harness | undefined;
let redis: PrivateRedis | undefined;
let sentinel: SentinelFixture | undefined;
let cluster: RedisClusterFixture | undefined;
const procs: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.kill('SIGKILL')));
  await h?.close();
  h = undefined;
  await redis?.stop();
  redis = undefined;
  await sentinel?.stop();
  sentinel = undefined;
  await cluster?.stop();
  cluster = undefined;
});

function cli(args: string[], env: Record<string, string>): CliProcess {
  const p = spawnCli(args, env);
  procs.push(p);
  return p;
}

const backfill = ['backfill', '--all', '--from', range.from, '--to', range.to, '--wait'];

/** Periods loaded so far (distinct report and period). */
async function loadedPeriods(harness: Harness): Promise<number> {
  const { rows } = await harness.db.pool.query<{ n: string }>(
    `SELECT count(DISTINCT (report, period_start)) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
  );
  return Number(rows[0]?.n);
}

/** Every period has its current load, reconciled, and was loaded exactly once. */
async function expectExact(harness: Harness, pulls: number): Promise<void> {
  expect(await totalsRows(harness)).toBe(pulls);
  expect(await unreconciledCount(harness.db.pool)).toBe(0);
  const perPeriod = await loadedPerPeriod(harness);
  expect(perPeriod).toHaveLength(pulls);
  expect(perPeriod.every((n) => n === 1)).toBe(true);
}

/** Resolves with the exit code, or 'still running' after `ms`. */
function exitWithin(p: CliProcess, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.exited,
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), ms))),
  ]).finally(() => clearTimeout(timer));
}

const STACK_FRAME = /^\s+at /m;

describe('a wait on Redis that goes away', () => {
  it('backfill --wait rides out its Redis stopped for 3 s: it exits 0 with every period loaded exactly once', async () => {
    redis = await startPrivateRedis({ persistent: true });
    h = await createHarness({
      // Slow enough that the stop lands mid-backfill.
      faults: { latencyMs: [150, 250], paths: ['/v2/reports'] },
      env: { REDIS_URL: redis.url },
    });
    const pulls = h.jobs.reports.length * DAYS;
    await h.worker({ concurrency: 2 });
    const wait = cli(backfill, h.env);
    await wait.waitFor(new RegExp(`enqueued ${pulls} pulls`));
    await waitUntil('a part of the backfill loaded', async () => (await loadedPeriods(h!)) >= 4, 30_000, 50);
    await redis.halt();
    const atStop = await loadedPeriods(h);
    expect(atStop).toBeLessThan(pulls);
    // The outage itself: three seconds with no Redis at all.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(wait.child.exitCode, wait.stderr()).toBeNull();
    await redis.start();

    expect(await exitWithin(wait, 60_000), wait.stderr()).toBe(0);
    expect(wait.stdout()).toContain(`${pulls} pulls done, 0 failed`);
    expect(wait.stderr()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ is not answering .*still waiting/);
    expect(wait.stderr()).toMatch(/Redis answers again after \d+ s/);
    expect(wait.stderr()).not.toMatch(STACK_FRAME);
    await expectExact(h, pulls);
  }, 120_000);

  it('backfill --wait rides out a Sentinel failover: it exits 0 with every period loaded exactly once', async () => {
    sentinel = await startSentinels();
    h = await createHarness({
      faults: { latencyMs: [150, 250], paths: ['/v2/reports'] },
      env: { REDIS_URL: '', REDIS_SENTINELS: sentinel.env, REDIS_SENTINEL_MASTER: sentinel.name },
    });
    const s = sentinel;
    const pulls = h.jobs.reports.length * DAYS;
    await Promise.all([h.worker({ concurrency: 2 }), h.worker({ concurrency: 2 })]);
    const wait = cli(backfill, h.env);
    await wait.waitFor(new RegExp(`enqueued ${pulls} pulls`));
    await waitUntil('a part of the backfill loaded', async () => (await loadedPeriods(h!)) >= 4, 30_000, 50);
    await s.master.kill();
    expect(await loadedPeriods(h)).toBeLessThan(pulls);
    await waitUntil(
      'Sentinel promoting the replica',
      async () => (await s.masterPort()) === s.replica.port,
      20_000,
    );

    expect(await exitWithin(wait, 60_000), wait.stderr()).toBe(0);
    expect(wait.stdout()).toContain(`${pulls} pulls done, 0 failed`);
    expect(wait.stderr()).toMatch(/Redis at Sentinel master ".*" via .* is not answering/);
    expect(wait.stderr()).not.toMatch(STACK_FRAME);
    await expectExact(h, pulls);
  }, 120_000);

  it('backfill --wait rides out the Cluster master holding its queue stopped for 3 s: it exits 0 with every period loaded exactly once', async () => {
    cluster = await startRedisCluster({ persistent: true });
    h = await createHarness({
      faults: { latencyMs: [150, 250], paths: ['/v2/reports'] },
      env: { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.env },
    });
    const pulls = h.jobs.reports.length * DAYS;
    // Every key of ours hashes to the slot of the tagged prefix: the master holding it holds the queue.
    const first = cluster.nodes[0]!.port;
    const slot = Number(await command(first, 'CLUSTER', 'KEYSLOT', `${h.config.queue.prefix}:x`));
    const slots = (await command(first, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    const owner = slots.find(([from, to]) => from <= slot && slot <= to)?.[2][1];
    const holder = cluster.nodes.find((n) => n.port === owner);
    expect(holder).toBeDefined();
    // A worker process, killed at the end: an in-process worker's close took 12 s here, its idle
    // BullMQ fetches on the restarted master never ending (harmless to what this test asserts).
    const worker = cli(['worker', '--concurrency', '2', '--stall-seconds', '10'], {
      ...h.env,
      LOG_LEVEL: 'info',
    });
    await worker.waitFor(/"msg":"worker started"/);
    const wait = cli(backfill, h.env);
    await wait.waitFor(new RegExp(`enqueued ${pulls} pulls`));
    await waitUntil('a part of the backfill loaded', async () => (await loadedPeriods(h!)) >= 4, 30_000, 50);
    await holder!.halt();
    expect(await loadedPeriods(h)).toBeLessThan(pulls);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(wait.child.exitCode, wait.stderr()).toBeNull();
    await holder!.restart();

    expect(await exitWithin(wait, 60_000), wait.stderr()).toBe(0);
    expect(wait.stdout()).toContain(`${pulls} pulls done, 0 failed`);
    expect(wait.stderr()).toMatch(/Redis at Cluster 127\.0\.0\.1:\d+.* is not answering/);
    expect(wait.stderr()).not.toMatch(STACK_FRAME);
    await expectExact(h, pulls);
  }, 120_000);

  it('a Redis gone past the bound ends backfill, heal and sync --wait with one line naming it, what was awaited and adops heal', async () => {
    const password = 'hunter2-redis-pw';
    redis = await startPrivateRedis({ password });
    h = await createHarness({ env: { REDIS_URL: redis.url, ADOPS_HEAL_DAYS: '3' } });
    // No worker: the pulls and the sync wait in the queue when Redis goes.
    const oneDay = ['backfill', '--all', '--from', range.to, '--to', range.to, '--wait'];
    const waits = [
      cli(oneDay, { ...h.env, ADOPS_REDIS_OUTAGE_SECONDS: '2' }),
      // The flag wins over the variable.
      cli([...oneDay, '--queue-outage-seconds', '2'], { ...h.env, ADOPS_REDIS_OUTAGE_SECONDS: '600' }),
      cli(['heal', '--wait'], { ...h.env, ADOPS_REDIS_OUTAGE_SECONDS: '2' }),
      cli(['sync', '--wait'], { ...h.env, ADOPS_REDIS_OUTAGE_SECONDS: '2' }),
    ];
    await Promise.all(waits.map((w) => w.waitFor(/enqueued /)));
    await redis.crash();
    const codes = await Promise.all(waits.map((w) => exitWithin(w, 30_000)));
    expect(codes).toEqual([1, 1, 1, 1]);
    const where = String.raw`Redis at redis://:\*\*\*@127\.0\.0\.1:\d+ did not answer for 2 s \(.+\)`;
    const lines = waits.map((w) =>
      w
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('adops:')),
    );
    const pulls = h.jobs.reports.length;
    for (const found of lines.slice(0, 2))
      expect(found).toEqual([
        expect.stringMatching(
          new RegExp(
            `^adops: ${where} while waiting for ${pulls} of ${pulls} pulls to finish: they go on in the workers once Redis is back; run \`adops heal\` to finish the job$`,
          ),
        ),
      ]);
    // heal --wait enqueues every day of ADOPS_HEAL_DAYS: nothing is loaded in this database.
    expect(lines[2]).toEqual([
      expect.stringMatching(
        new RegExp(`^adops: ${where} while waiting for ${pulls * 3} of ${pulls * 3} pulls`),
      ),
    ]);
    expect(lines[3]).toEqual([
      expect.stringMatching(
        new RegExp(`^adops: ${where} while waiting for entity sync job s-\\w+ to finish: .*adops sync`),
      ),
    ]);
    for (const w of waits) {
      expect(w.stderr()).not.toMatch(STACK_FRAME);
      expect(w.stderr() + w.stdout()).not.toContain(password);
    }
  }, 90_000);

  it('a Redis lost while backfill enqueues ends it with one line naming Redis, no stack trace', async () => {
    redis = await startPrivateRedis();
    h = await createHarness({ env: { REDIS_URL: redis.url } });
    // Tens of thousands of pulls: the enqueue takes seconds, and Redis goes in the middle of it.
    const port = Number(new URL(redis.url).port);
    const before = Number(await command(port, 'DBSIZE'));
    const run = cli(['backfill', '--all', '--from', '2000-01-01', '--to', range.to], h.env);
    await waitUntil(
      'the first pulls in Redis',
      async () => Number(await command(port, 'DBSIZE')) > before + 100,
      30_000,
      20,
    );
    await redis.crash();
    expect(await exitWithin(run, 30_000)).toBe(1);
    const lines = run
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('adops:'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^adops: lost Redis at redis:\/\/127\.0\.0\.1:\d+ \(.+\) before the command finished: .*run the command again/,
      ),
    ]);
    expect(run.stderr()).not.toMatch(STACK_FRAME);
  }, 60_000);
});
