// Webhooks through a real worker, real Redis and Postgres, the emulator and a real HTTP receiver:
// signed bodies, period.failed from a pull that failed for good, retries of one delivery, a dead
// endpoint beside a backfill, and report.late / report.fresh transitions.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { secretsOf } from '../../../src/config/env.js';
import type { JobSet } from '../../../src/config/jobs.js';
import { loadJobs } from '../../../src/config/jobs.js';
import { createLogger } from '../../../src/log/logger.js';
import { freshnessTransitions } from '../../../src/observe/freshness-watch.js';
import { verifyBody } from '../../../src/observe/webhook-signature.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/backfill.js';
import { FRESHNESS_JOB, WEBHOOK_QUEUE } from '../../../src/schedule/names.js';
import { enqueueWebhook, type WebhookQueue } from '../../../src/schedule/webhooks.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { scanForSecret } from '../../helpers/reliability/secrets.js';
import { createHarness, lastDays, quietLogger, type Harness } from '../queue/harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const SECRET = 'whsec-test-5f3a9c0e7b21d4';
const FAST = { backoff: { baseMs: 50, maxMs: 200 }, freshnessEveryMs: 3_600_000 };

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await h?.close();
  await receiver?.close();
  h = undefined;
  receiver = undefined;
});

/** The definitions with only daily_zone, so freshness events concern one report. */
function zoneOnly(): JobSet {
  const jobs = loadJobs('jobs');
  return { ...jobs, reports: jobs.reports.filter((r) => r.name === 'daily_zone') };
}

/** The signature a receiver computes itself: HMAC-SHA256 of the raw bytes, hex. */
function hmac(raw: Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
}

async function withWebhook(url: string, jobs: JobSet = zoneOnly(), env: Record<string, string> = {}) {
  return createHarness({ jobs, env: { ADOPS_WEBHOOK_URL: url, ADOPS_WEBHOOK_SECRET: SECRET, ...env } });
}

/** A logger as `adops worker` builds it (every secret of the config redacted), into `lines`. */
function capturedLogger(harness: Harness, lines: string[]) {
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n').filter(Boolean)));
  return createLogger({
    level: 'debug',
    secrets: secretsOf(harness.config),
    destination: stream,
    pretty: false,
  });
}

/** Resolves once no delivery is waiting, delayed or running on the webhook queue. */
async function deliveriesSettled(queue: WebhookQueue, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
    if (open.every((j) => j.name === FRESHNESS_JOB)) return;
    if (Date.now() > until) throw new Error(`${open.length} webhook jobs still open`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves once at least `n` freshness evaluations completed. */
async function evaluations(queue: WebhookQueue, n: number, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const done = (await queue.getCompleted(0, -1)).filter((j) => j.name === FRESHNESS_JOB).length;
    if (done >= n) return;
    if (Date.now() > until) throw new Error(`${done} of ${n} freshness evaluations completed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook signature', () => {
  it('is HMAC-SHA256 of the raw body under ADOPS_WEBHOOK_SECRET; an evolution.swapped event arrives with its type and delivery id', async () => {
    receiver = await startReceiver();
    h = await withWebhook(receiver.url);
    await h.worker({ webhooks: FAST });
    const id = await enqueueWebhook(
      h.queues.webhooks,
      { type: 'evolution.swapped', report: 'daily_zone', from_version: 1, to_version: 2 },
      quietLogger,
    );
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const [got] = await receiver.waitFor('evolution.swapped', 1);
    expect(got?.body).toEqual({
      id,
      type: 'evolution.swapped',
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      report: 'daily_zone',
      from_version: 1,
      to_version: 2,
    });
    const signature = got?.headers['x-adops-signature'];
    expect(signature).toBe(hmac(got!.raw, SECRET));
    // A receiver holding another secret, or a body changed on the way, does not verify.
    expect(signature).not.toBe(hmac(got!.raw, 'another-secret-0123456789'));
    expect(signature).not.toBe(hmac(Buffer.concat([got!.raw, Buffer.from(' ')]), SECRET));
    expect(verifyBody(got!.raw, SECRET, String(signature))).toBe(true);
    expect(verifyBody(got!.raw, 'another-secret-0123456789', String(signature))).toBe(false);
    expect(got?.headers['x-adops-event']).toBe('evolution.swapped');
    expect(got?.headers['x-adops-delivery']).toBe(id);
    expect(got?.headers['content-type']).toBe('application/json');
  });
});

describe('period.failed', () => {
  it('is delivered exactly once for a pull that failed for good, and never for one that was retried and loaded', async () => {
    receiver = await startReceiver();
    h = await withWebhook(receiver.url, zoneOnly(), { ADOPS_HTTP_ATTEMPTS: '1' });
    const lines: string[] = [];
    await h.worker({ webhooks: FAST, logger: capturedLogger(h, lines) });
    const zone = h.jobs.reports;
    const { from, to } = lastDays(2);

    h.emulator.override({
      path: '/v2/reports',
      status: 403,
      body: '{"message":"forbidden report"}',
      times: 1,
    });
    const first = await enqueueBackfill(h.queues.pulls, zone, to, to);
    const failed = await waitForPulls(h.queues.pulls, first.pulls, { pollMs: 50 });
    expect(failed.failed).toHaveLength(1);
    const [event] = await receiver.waitFor('period.failed', 1);
    const { rows } = await h.db.pool.query<{ load_id: string }>(
      `SELECT load_id FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone' AND status = 'failed'`,
    );
    expect(rows).toHaveLength(1);
    expect(event?.body).toMatchObject({
      type: 'period.failed',
      report: 'daily_zone',
      period_start: to,
      period_end: to,
      reason: expect.stringContaining('HTTP 403'),
      attempts: 1,
      load_id: Number(rows[0]?.load_id),
    });
    expect(event?.headers['x-adops-signature']).toBe(hmac(event!.raw, SECRET));

    // A transient failure retried until the period loads is no failure for good.
    h.emulator.override({ path: '/v2/reports', status: 503, body: '{"message":"down"}', times: 1 });
    const second = await enqueueBackfill(h.queues.pulls, zone, from, from);
    const loaded = await waitForPulls(h.queues.pulls, second.pulls, { pollMs: 50 });
    expect(loaded.completed).toHaveLength(1);
    expect((await h.queues.pulls.getJob(second.pulls[0]!.jobId))?.attemptsMade).toBe(2);
    await deliveriesSettled(h.queues.webhooks);
    expect(receiver.of('period.failed')).toHaveLength(1);

    // The secret is in no log line, no Redis key or value under the prefix, and not in Postgres.
    const scan = await scanForSecret({
      secret: SECRET,
      logLines: lines,
      redis: [{ url: REDIS_URL, prefix: h.prefix }],
      database: { url: h.db.url, pool: h.db.pool },
    });
    expect(scan.searched.redisKeys).toBeGreaterThan(0);
    expect(scan.searched.logLines).toBeGreaterThan(0);
    expect(scan.found).toEqual([]);
  });
});

describe('delivery retries', () => {
  it('retries 503 twice with the same delivery id, then one 200 ends it after 3 attempts', async () => {
    receiver = await startReceiver((body, n) => (body.type === 'evolution.swapped' && n <= 2 ? 503 : 200));
    h = await withWebhook(receiver.url);
    await h.worker({ webhooks: FAST });
    const id = await enqueueWebhook(
      h.queues.webhooks,
      { type: 'evolution.swapped', report: 'daily_zone', from_version: 3, to_version: 4 },
      quietLogger,
    );
    const got = await receiver.waitFor('evolution.swapped', 3);
    await deliveriesSettled(h.queues.webhooks);
    expect(got.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(new Set(got.map((r) => r.body.id))).toEqual(new Set([id]));
    expect(new Set(got.map((r) => r.headers['x-adops-delivery']))).toEqual(new Set([id]));
    for (const r of got) expect(r.headers['x-adops-signature']).toBe(hmac(r.raw, SECRET));
    const job = await h.queues.webhooks.getJob(id!);
    expect(job?.attemptsMade).toBe(3);
    expect(await job?.isCompleted()).toBe(true);
    expect(receiver.of('evolution.swapped')).toHaveLength(3);
  });

  it('fails for good at the first 4xx other than 429, with the answer as its reason, logged', async () => {
    receiver = await startReceiver((body) => (body.type === 'evolution.swapped' ? 410 : 200));
    h = await withWebhook(receiver.url);
    const lines: string[] = [];
    await h.worker({ webhooks: FAST, logger: capturedLogger(h, lines) });
    const id = await enqueueWebhook(
      h.queues.webhooks,
      { type: 'evolution.swapped', report: 'daily_zone', from_version: 1, to_version: 2 },
      quietLogger,
    );
    await receiver.waitFor('evolution.swapped', 1);
    await deliveriesSettled(h.queues.webhooks);
    const job = await h.queues.webhooks.getJob(id!);
    expect(await job?.isFailed()).toBe(true);
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toBe('the webhook answered HTTP 410: status 410');
    expect(receiver.of('evolution.swapped')).toHaveLength(1);
    expect(lines.some((l) => l.includes('webhook refused the event') && l.includes('HTTP 410'))).toBe(true);
  });

  it('logs and swallows an event Redis refuses: enqueueing never throws', async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const queue: WebhookQueue = new Queue(WEBHOOK_QUEUE, { connection: redis, prefix: 'unused' });
    await queue.close();
    redis.disconnect();
    const lines: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (c: Buffer) => lines.push(c.toString('utf8')));
    const logger = createLogger({ level: 'warn', secrets: [], destination: stream, pretty: false });
    const id = await enqueueWebhook(
      queue,
      { type: 'evolution.swapped', report: 'daily_zone', from_version: 1, to_version: 2 },
      logger,
    );
    expect(id).toBeUndefined();
    expect(lines.join('')).toContain('could not queue a webhook event');
  });
});

describe('a dead webhook endpoint', () => {
  it('does not hold back a backfill: every period loads while its events wait for retries', async () => {
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    h = await withWebhook(`http://127.0.0.1:${deadPort}/hooks`, zoneOnly(), { ADOPS_HTTP_ATTEMPTS: '1' });
    await h.worker({ webhooks: { backoff: { baseMs: 1_000, maxMs: 5_000 }, freshnessEveryMs: 3_600_000 } });
    const { from, to } = lastDays(6);
    // The first pull fails for good, so a period.failed event is queued for the dead endpoint.
    h.emulator.override({ path: '/v2/reports', status: 400, body: '{"message":"bad request"}', times: 1 });
    const started = Date.now();
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, from, to);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    const elapsed = Date.now() - started;
    expect(pulls).toHaveLength(6);
    expect(result.failed).toHaveLength(1);
    expect(result.completed).toHaveLength(5);
    expect(elapsed).toBeLessThan(30_000);
    const { rows } = await h.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
    );
    expect(Number(rows[0]?.n)).toBe(5);
    // The event is queued and being retried, not lost and not delivered.
    const until = Date.now() + 10_000;
    let retried = false;
    while (!retried && Date.now() < until) {
      const jobs = await h.queues.webhooks.getJobs(['delayed', 'waiting', 'active']);
      retried = jobs.some((j) => j.data.type === 'period.failed' && j.attemptsMade >= 1);
      if (!retried) await new Promise((r) => setTimeout(r, 50));
    }
    expect(retried).toBe(true);
  });
});

describe('report.late and report.fresh', () => {
  it('announce each transition once: late with no data, fresh again once its periods load', async () => {
    receiver = await startReceiver();
    h = await withWebhook(receiver.url);
    await h.worker({ webhooks: { ...FAST, freshnessEveryMs: 300 } });
    const [late] = await receiver.waitFor('report.late', 1);
    expect(late?.body).toMatchObject({
      type: 'report.late',
      report: 'daily_zone',
      last_loaded: null,
      age_hours: null,
      freshness_hours: 48,
    });
    const seen = (await h.queues.webhooks.getCompleted(0, -1)).filter((j) => j.name === FRESHNESS_JOB).length;
    await evaluations(h.queues.webhooks, seen + 3);
    expect(receiver.of('report.late')).toHaveLength(1);
    expect(receiver.of('report.fresh')).toHaveLength(0);

    const { from, to } = lastDays(2);
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, from, to);
    expect((await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 })).completed).toHaveLength(2);
    const [fresh] = await receiver.waitFor('report.fresh', 1);
    expect(fresh?.body).toMatchObject({ type: 'report.fresh', report: 'daily_zone', last_loaded: to });
    expect(fresh?.body.age_hours).toBeLessThan(48);
    const after = (await h.queues.webhooks.getCompleted(0, -1)).filter(
      (j) => j.name === FRESHNESS_JOB,
    ).length;
    await evaluations(h.queues.webhooks, after + 3);
    await deliveriesSettled(h.queues.webhooks);
    expect(receiver.of('report.fresh')).toHaveLength(1);
    expect(receiver.of('report.late')).toHaveLength(1);
  });

  it('is seen by one evaluator only when several evaluate at once', async () => {
    h = await createHarness({ jobs: zoneOnly() });
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const watch = { pool: h.db.pool, schema: TEST_SCHEMA, redis, prefix: h.prefix, days: 7 };
      const seen = await Promise.all([1, 2, 3, 4].map(() => freshnessTransitions(watch, h!.jobs)));
      expect(seen.flat().map((e) => `${e.type} ${e.report}`)).toEqual(['report.late daily_zone']);
      expect(await freshnessTransitions(watch, h.jobs)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
