// The worker process' own behaviour: graceful stop on SIGTERM, metrics and health over HTTP.
import { Redis } from 'ioredis';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { limiterKey, type RequestLimiter } from '../../../src/limits/limiter.js';
import { createRequestLimiter } from '../../../src/limits/redis.js';
import { createPgRequestLimiter } from '../../../src/limits/postgres.js';
import { enqueueEntitySync } from '../../../src/catalogue/enqueue.js';
import { ENTITY_QUEUE } from '../../../src/platform/queue/jobs.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { TEST_QUEUE } from '../../helpers/services.js';
import { capturedLogger, createHarness, lastDays, pullActive, type Harness } from '../../helpers/pipeline.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/reliability/redis-server.js';

let h: Harness | undefined;
let proc: CliProcess | undefined;
let privateRedis: PrivateRedis | undefined;
afterEach(async () => {
  await proc?.kill('SIGKILL');
  proc = undefined;
  await privateRedis?.stop();
  privateRedis = undefined;
  await h?.close();
  h = undefined;
});

describe('adops worker', () => {
  it('on SIGTERM stops taking jobs, finishes the running pull, and exits 0', async () => {
    h = await createHarness({ faults: { latencyMs: 2_000, paths: ['/v2/reports'] } });
    proc = spawnCli(['worker', '--concurrency', '1'], { ...h.env, LOG_LEVEL: 'info' });
    await proc.waitFor(/"msg":"worker started"/);
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const { to } = lastDays(2);
    const { pulls } = await enqueueBackfill(h.queues.pulls, zone, to, to);
    // The only pull is running (its request sleeps in the emulator) before the second is queued, so
    // the active one is the first even when watching for it is slow (a busy machine, the Postgres queue).
    await pullActive(h);
    const second = await enqueueBackfill(
      h.queues.pulls,
      h.jobs.reports.filter((r) => r.name === 'hourly'),
      to,
      to,
    );
    expect(await h.queues.pulls.getJobState(pulls[0]!.jobId)).toBe('active');
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.stderr()).toContain('"graceful":true');
    const first = await waitForPulls(h.queues.pulls, pulls);
    expect(first.completed).toHaveLength(1);
    // The other pull was not taken: it still waits for a worker.
    expect(await h.queues.pulls.getJobState(second.pulls[0]!.jobId)).toBe('waiting');
    const { rows } = await h.db.pool.query(`SELECT report, status FROM "${TEST_SCHEMA}".report_loads`);
    expect(rows).toEqual([{ report: 'daily_zone', status: 'loaded' }]);
  });

  it('with its Redis gone, SIGTERM ends the process within the shutdown deadline plus a few seconds', async () => {
    // ioredis never ends a connection disconnected while it waits to reconnect, so BullMQ's close
    // waited for ever and its lock-renewal timer kept the process alive (90 s and more).
    privateRedis = await startPrivateRedis();
    // A Redis outage exists only where the queues are on Redis: this case runs there on both projects.
    h = await createHarness({ env: { REDIS_URL: privateRedis.url, ADOPS_QUEUE: 'redis' } });
    const deadlineSeconds = 2;
    proc = spawnCli(['worker'], {
      ...h.env,
      LOG_LEVEL: 'info',
      ADOPS_SHUTDOWN_TIMEOUT_SECONDS: String(deadlineSeconds),
    });
    await proc.waitFor(/"msg":"worker started"/);
    await privateRedis.crash();
    // Every connection of the worker has noticed and is waiting to reconnect.
    await proc.waitFor(/ECONNREFUSED/);
    const signalled = Date.now();
    proc.child.kill('SIGTERM');
    const code = await Promise.race([
      proc.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000)),
    ]);
    const seconds = (Date.now() - signalled) / 1000;
    expect(code).toBe(0);
    expect(proc.stderr()).toContain('"msg":"worker stopped"');
    expect(seconds).toBeLessThan(deadlineSeconds + 8);
  });
});

describe('a worker that cannot start', () => {
  it('exits 2 with one line when a setting it needs is missing, instead of running on with its Redis connections open', async () => {
    h = await createHarness();
    const env: Record<string, string> = { ...h.env };
    delete env.ADOPS_BASE_URL;
    proc = spawnCli(['worker'], env);
    const code = await Promise.race([
      proc.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000)),
    ]);
    expect(code, proc.stderr()).toBe(2);
    expect(proc.stderr()).toBe('adops: ADOPS_BASE_URL is missing: expected the API base URL ending in /v2\n');
  });
});

/** A port of 127.0.0.1 nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a worker whose Redis is down', () => {
  it('reports a missing setting at once, before any wait for Redis', async () => {
    h = await createHarness();
    const env: Record<string, string> = {
      ...h.env,
      ADOPS_QUEUE: 'redis',
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    };
    delete env.ADOPS_BASE_URL;
    proc = spawnCli(['worker'], env);
    const code = await Promise.race([
      proc.exited,
      // Under the worker's 30 s wait for Redis (the message came only after it), with room for a slow start.
      new Promise((resolve) => setTimeout(() => resolve('still running'), 27_000)),
    ]);
    expect(code, proc.stderr()).toBe(2);
    expect(proc.stderr()).toBe('adops: ADOPS_BASE_URL is missing: expected the API base URL ending in /v2\n');
  });

  it('logs its connection attempts and answers /health (503, starting) while it waits', async () => {
    h = await createHarness();
    const metricsPort = await closedPort();
    const redisPort = await closedPort();
    proc = spawnCli(['worker'], {
      ...h.env,
      ADOPS_QUEUE: 'redis',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      ADOPS_METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
    });
    const line = await proc.waitFor(/not reachable/, 15_000);
    expect(JSON.parse(line)).toMatchObject({ level: 40, attempts: expect.any(Number) });
    expect(line).toContain(`Redis at redis://127.0.0.1:${redisPort} is not reachable (connect ECONNREFUSED`);
    const health = await fetch(`http://127.0.0.1:${metricsPort}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      ok: false,
      starting: true,
      queue: { backend: 'redis', ok: false },
    });
    // Only JSON lines on stderr, and nothing on stdout.
    for (const l of proc
      .stderr()
      .split('\n')
      .filter((x) => x !== ''))
      expect(() => JSON.parse(l), l).not.toThrow();
    expect(proc.stdout()).toBe('');
  });
});

describe('a shutdown deadline', () => {
  it('aborts the running request and puts its pull back in the queue, with no attempt spent', async () => {
    h = await createHarness({ faults: { latencyMs: 20_000, paths: ['/v2/reports'] } });
    const worker = await h.worker();
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const { to } = lastDays(1);
    const { pulls } = await enqueueBackfill(h.queues.pulls, zone, to, to);
    await pullActive(h);
    const started = Date.now();
    await worker.close(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    const job = await h.queues.pulls.getJob(pulls[0]!.jobId);
    expect(await job?.getState()).toBe('waiting');
    expect(job?.attemptsMade).toBe(0);
    const { rows } = await h.db.pool.query(`SELECT status FROM "${TEST_SCHEMA}".report_loads`);
    expect(rows).toEqual([]);
  });
});

describe('metrics and health', () => {
  it('serves pull, row and API request counts and queue depth, and a health check', async () => {
    h = await createHarness();
    const worker = await h.worker({ metrics: { port: 0, host: '127.0.0.1' } });
    const base = `http://127.0.0.1:${worker.metricsPort}`;
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const { from, to } = lastDays(2);
    const { pulls } = await enqueueBackfill(h.queues.pulls, zone, from, to);
    await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    const text = await (await fetch(`${base}/metrics`)).text();
    // Two periods (pulls) came in one report request (days_per_request).
    expect(text).toMatch(/adops_pulls_total\{report="daily_zone",outcome="loaded"\} 2/);
    expect(text).toMatch(/adops_report_requests_total\{report="daily_zone"\} 1/);
    expect(text).toMatch(/adops_request_splits_total\{report="daily_zone"\} 0/);
    expect(text).toMatch(/adops_rows_loaded_total\{report="daily_zone"\} [1-9]/);
    expect(text).toMatch(/adops_api_requests_total\{status="200"\} 1/);
    expect(text).toMatch(/adops_load_duration_seconds_count\{report="daily_zone"\} 1/);
    expect(text).toMatch(/adops_queue_depth\{queue="report-pulls",state="waiting"\} 0/);
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      ok: true,
      queue: { backend: TEST_QUEUE, ok: true },
      running: true,
      stuck: false,
    });
    // `redis` only where the queue is on Redis: on Postgres there is no Redis to report on.
    if (TEST_QUEUE === 'redis') expect(body.redis).toBe('ready');
    else expect(body).not.toHaveProperty('redis');
  });
});

/** Resolves with the first line of `lines` matching `pattern`, looking every 25 ms for up to 10 s. */
async function logged(lines: readonly string[], pattern: RegExp): Promise<string> {
  for (const deadline = Date.now() + 10_000; ;) {
    const line = lines.find((l) => pattern.test(l));
    if (line !== undefined) return line;
    if (Date.now() > deadline)
      throw new Error(`no log line matched ${String(pattern)}:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a pause set by another worker of the deployment', () => {
  it('is logged by the worker that obeys it, once, with its length', async () => {
    h = await createHarness();
    const { logger, lines } = capturedLogger(h.config);
    await h.worker({ logger });
    const key = limiterKey(h.config.queue.prefix);
    // Another worker's limiter on the queue's store, as its runtime opens it, meeting a 429.
    const redis = TEST_QUEUE === 'redis' ? new Redis(REDIS_URL) : undefined;
    const other: RequestLimiter =
      redis === undefined
        ? createPgRequestLimiter({ pool: h.db.pool, schema: TEST_SCHEMA }, key, 100)
        : createRequestLimiter(redis, key, 100);
    try {
      await other.pause(3_000);
      const line = JSON.parse(await logged(lines, /API requests paused/)) as {
        pauseMs: number;
        level: number;
      };
      expect(line.pauseMs).toBeGreaterThan(2_000);
      expect(line.pauseMs).toBeLessThanOrEqual(3_000);
      // pino's warn.
      expect(line.level).toBe(40);
      expect(lines.filter((l) => l.includes('API requests paused'))).toHaveLength(1);
    } finally {
      await other.close();
      redis?.disconnect();
    }
  });
});

describe('entity syncs', () => {
  it('are processed by the worker into the catalogue tables', async () => {
    h = await createHarness();
    await h.worker();
    const { jobId } = await enqueueEntitySync(h.queues.syncs);
    const job = await h.queues.syncs.getJob(jobId);
    const events = h.queues.backend.events(ENTITY_QUEUE);
    try {
      await events.waitUntilReady();
      const result = (await job!.waitUntilFinished(events, 30_000)) as { campaigns: number };
      expect(result.campaigns).toBeGreaterThan(0);
    } finally {
      await events.close();
    }
    const { rows } = await h.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${TEST_SCHEMA}".campaigns`,
    );
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
  });
});
