// Webhooks through a real worker, real Redis and Postgres, the emulator and a real HTTP receiver:
// Standard Webhooks signatures checked by the `standardwebhooks` npm package and by the docs' own
// verifier, a replay refused once 5 minutes have passed, period.failed from a pull that failed for
// good, retries of one delivery, a dead endpoint beside a backfill, and report.late / report.fresh.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { secretsOf } from '../../../src/platform/config/env.js';
import { type JobSet, loadJobs } from '../../../src/platform/config/jobs.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { freshnessTransitions } from '../../../src/worker/webhook-worker.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { FRESHNESS_JOB, WEBHOOK_QUEUE } from '../../../src/platform/queue/jobs.js';
import { behindEvents, enqueueWebhook } from '../../../src/webhooks/events.js';
import { type WebhookQueue } from '../../../src/platform/queue/jobs.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { TEST_QUEUE } from '../../helpers/services.js';
import { scanForSecret } from '../../helpers/reliability/secrets.js';
import { createHarness, lastDays, quietLogger, type Harness } from '../../helpers/pipeline.js';
import { startReceiver, type Received, type Receiver } from './receiver.js';
import { lastDays as daysUpToYesterday, pullDays, syncCatalogue } from '../bi/fill.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const OPERATIONS = readFileSync('docs/operations.md', 'utf8');

/** The code block of docs/operations.md in `lang` that contains `marker`. */
function documented(lang: string, marker: string): string {
  const block = [...OPERATIONS.matchAll(new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, 'g'))]
    .map((m) => m[1] ?? '')
    .find((code) => code.includes(marker));
  if (block === undefined) throw new Error(`docs/operations.md has no ${lang} block with ${marker}`);
  return block;
}

// The secret as docs/operations.md tells users to make it: its own command, run.
const SECRET = execFileSync('sh', ['-c', documented('sh', 'whsec_').trim()], { encoding: 'utf8' }).trim();
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const FAST = { backoff: { baseMs: 50, maxMs: 200 }, freshnessEveryMs: 3_600_000 };

type VerifyByHand = (raw: Buffer, headers: IncomingHttpHeaders, secret: string, now?: number) => boolean;
/** docs/operations.md's by-hand verifier, imported from the docs' own text. */
let verifyByHand: VerifyByHand;
let docsDir: string;
beforeAll(async () => {
  docsDir = mkdtempSync(join(tmpdir(), 'adops-webhook-docs-'));
  const file = join(docsDir, 'verify.mjs');
  writeFileSync(file, documented('js', 'export function verifyWebhook'));
  ({ verifyWebhook: verifyByHand } = (await import(pathToFileURL(file).href)) as {
    verifyWebhook: VerifyByHand;
  });
});
afterAll(() => rmSync(docsDir, { recursive: true, force: true }));

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

/** A delivery id that is not the one sent. */
const OTHER_ID = '00000000-0000-4000-8000-000000000000';

/** What the `standardwebhooks` library makes of a received request: its body, or why not. */
function libraryVerdict(r: Pick<Received, 'raw' | 'headers'>, secret = SECRET): unknown {
  try {
    return new Webhook(secret).verify(r.raw, r.headers as Record<string, string>);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.message;
    throw error;
  }
}

/** The library's verdict as if its clock read `at` (Date only faked for the one synchronous call). */
function libraryVerdictAt(at: Date, r: Pick<Received, 'raw' | 'headers'>): unknown {
  vi.useFakeTimers({ toFake: ['Date'], now: at });
  try {
    return libraryVerdict(r);
  } finally {
    vi.useRealTimers();
  }
}

/** Sends `r` again, byte for byte and header for header, to `url`; resolves to the status. */
function replay(url: string, r: Pick<Received, 'raw' | 'headers'>): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { ...r.headers };
    delete headers.host;
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(r.raw);
  });
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
  it('verifies with the standardwebhooks library under the secret made as documented: webhook-id is the body id, an evolution.swapped event', async () => {
    expect(SECRET).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver = await startReceiver();
    h = await withWebhook(receiver.url);
    await h.worker({ webhooks: FAST });
    const before = Math.floor(Date.now() / 1000);
    const id = await enqueueWebhook(
      h.queues.webhooks,
      { type: 'evolution.swapped', report: 'daily_zone', from_version: 1, to_version: 2 },
      quietLogger,
    );
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const [got] = await receiver.waitFor('evolution.swapped', 1);
    const body = {
      id,
      type: 'evolution.swapped',
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      report: 'daily_zone',
      from_version: 1,
      to_version: 2,
    };
    expect(got?.body).toEqual(body);
    // The library returns the parsed body only when the signature and timestamp verify.
    expect(libraryVerdict(got!)).toEqual(body);
    expect(verifyByHand(got!.raw, got!.headers, SECRET)).toBe(true);
    expect(got?.headers['webhook-id']).toBe(id);
    expect(Number(got?.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(Number(got?.headers['webhook-timestamp'])).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect(got?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(got?.headers['x-adops-event']).toBe('evolution.swapped');
    expect(got?.headers['content-type']).toBe('application/json');
    // The old body-only signature is gone, not sent beside the new one.
    expect(got?.headers['x-adops-signature']).toBeUndefined();
    expect(got?.headers['x-adops-delivery']).toBeUndefined();

    // Another secret, a changed body, or another id does not verify.
    expect(libraryVerdict(got!, OTHER_SECRET)).toBe('No matching signature found');
    expect(verifyByHand(got!.raw, got!.headers, OTHER_SECRET)).toBe(false);
    const changed = { raw: Buffer.concat([got!.raw, Buffer.from(' ')]), headers: got!.headers };
    expect(libraryVerdict(changed)).toBe('No matching signature found');
    expect(verifyByHand(changed.raw, changed.headers, SECRET)).toBe(false);
    const otherId = { raw: got!.raw, headers: { ...got!.headers, 'webhook-id': OTHER_ID } };
    expect(libraryVerdict(otherId)).toBe('No matching signature found');
  });

  it('a receiver that refuses timestamps older than 5 minutes refuses a captured delivery replayed later', async () => {
    // Receivers that verify: with the library on the real clock, and the docs' verifier on a clock
    // `skewMs` ahead (the replay happens "later" without waiting 5 minutes).
    let skewMs = 0;
    const verifyingAnswer = (_b: unknown, _n: number, r: { headers: IncomingHttpHeaders; raw: Buffer }) =>
      verifyByHand(r.raw, r.headers, SECRET, Date.now() + skewMs) ? 204 : 401;
    receiver = await startReceiver((_b, _n, r) => (typeof libraryVerdict(r) === 'string' ? 401 : 204));
    const later = await startReceiver(verifyingAnswer);
    try {
      h = await withWebhook(receiver.url);
      await h.worker({ webhooks: FAST });
      await enqueueWebhook(
        h.queues.webhooks,
        {
          type: 'period.failed',
          report: 'daily_zone',
          period_start: '2026-03-01',
          period_end: '2026-03-01',
          reason: 'HTTP 403',
          attempts: 1,
          load_id: null,
        },
        quietLogger,
      );
      const [captured] = await receiver.waitFor('period.failed', 1);
      expect(captured?.status).toBe(204);
      const sentAt = Number(captured!.headers['webhook-timestamp']) * 1000;

      // Within the window the same bytes still verify: replay protection is the timestamp's job.
      expect(await replay(later.url, captured!)).toBe(204);
      expect(libraryVerdictAt(new Date(sentAt + 4 * 60_000), captured!)).toMatchObject({
        type: 'period.failed',
      });
      // Six minutes later both receivers refuse the very same request.
      skewMs = sentAt + 6 * 60_000 - Date.now();
      expect(await replay(later.url, captured!)).toBe(401);
      expect(libraryVerdictAt(new Date(sentAt + 6 * 60_000), captured!)).toBe('Message timestamp too old');
      // A replay given a newer timestamp needs a new signature, which only the secret can make.
      const restamped = {
        raw: captured!.raw,
        headers: { ...captured!.headers, 'webhook-timestamp': String(sentAt / 1000 + 1) },
      };
      expect(await replay(receiver.url, restamped)).toBe(401);
      expect(receiver.of('period.failed').map((r) => r.status)).toEqual([204, 401]);
    } finally {
      await later.close();
    }
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
    expect(event?.headers['webhook-id']).toBe(event?.body.id);
    expect(libraryVerdict(event!)).toEqual(event?.body);

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
      redis: TEST_QUEUE === 'redis' ? [{ url: REDIS_URL, prefix: h.prefix }] : [],
      database: { url: h.db.url, pool: h.db.pool },
    });
    // The jobs were searched: Redis' keys, or on Postgres the queue's rows in the database dumped.
    if (TEST_QUEUE === 'redis') expect(scan.searched.redisKeys).toBeGreaterThan(0);
    else
      expect(
        (await h.db.pool.query(`SELECT 1 FROM "${h.config.queue.schema}".job LIMIT 1`)).rowCount,
      ).toBeGreaterThan(0);
    expect(scan.searched.logLines).toBeGreaterThan(0);
    expect(scan.found).toEqual([]);
  });
});

describe('delivery retries', () => {
  it('retries 503 twice with the same webhook-id, each attempt with its own timestamp and signature, then one 200 ends it after 3 attempts', async () => {
    // Retry-After: 1 puts each attempt in a later second than the one before, so its timestamp differs.
    receiver = await startReceiver((body, n) =>
      body.type === 'evolution.swapped' && n <= 2 ? { status: 503, headers: { 'retry-after': '1' } } : 200,
    );
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
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));
    const stamps = got.map((r) => Number(r.headers['webhook-timestamp']));
    expect(stamps[1]).toBeGreaterThan(stamps[0]!);
    expect(stamps[2]).toBeGreaterThan(stamps[1]!);
    expect(new Set(got.map((r) => r.headers['webhook-signature'])).size).toBe(3);
    for (const r of got) expect(libraryVerdict(r)).toEqual(r.body);
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
    const each = [{ name: 'default', reports: undefined, daysPerRequest: 1 }]; // a pull per period
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, from, to, 'newest-first', each);
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
    // Both days in one pull (days_per_request).
    expect((await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 })).completed).toHaveLength(1);
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
    const watch = { wh: warehouseOf(h.db.pool, TEST_SCHEMA), days: 7 };
    const seen = await Promise.all([1, 2, 3, 4].map(() => freshnessTransitions(watch, h!.jobs)));
    expect(seen.flat().map((e) => `${e.type} ${e.report}`)).toEqual(['report.late daily_zone']);
    expect(await freshnessTransitions(watch, h.jobs)).toEqual([]);
  });
});

describe('campaign.behind', () => {
  it('tells each campaign bi_campaign_pacing calls behind once a day, signed so standardwebhooks verifies it', async () => {
    receiver = await startReceiver();
    const jobs = loadJobs('jobs');
    h = await withWebhook(receiver.url, {
      ...jobs,
      reports: jobs.reports.filter((r) => r.name === 'daily_campaign'),
    });
    // The warehouse filled before any worker evaluates: a half-loaded flight would look behind.
    await syncCatalogue(h.db, h.emulator);
    await pullDays(h.db, h.emulator, daysUpToYesterday(3), h.jobs.reports);
    const { rows } = await h.db.pool.query<{ account: string; campaign_id: string }>(
      `SELECT account, campaign_id FROM "${TEST_SCHEMA}".bi_campaign_pacing WHERE state = 'behind' ORDER BY 2`,
    );
    expect(rows.length).toBeGreaterThan(0);
    await h.worker({ webhooks: { ...FAST, freshnessEveryMs: 300 } });
    const told = await receiver.waitFor('campaign.behind', rows.length);
    const seen = (await h.queues.webhooks.getCompleted(0, -1)).filter((j) => j.name === FRESHNESS_JOB).length;
    await evaluations(h.queues.webhooks, seen + 3);
    await deliveriesSettled(h.queues.webhooks);
    expect(receiver.of('campaign.behind')).toHaveLength(rows.length);
    expect(told.map((r) => `${String(r.body.account)} ${String(r.body.campaign_id)}`).sort()).toEqual(
      rows.map((r) => `${r.account} ${r.campaign_id}`).sort(),
    );
    for (const got of told) {
      expect(libraryVerdict(got)).toEqual(got.body);
      expect(got.headers['webhook-id']).toBe(got.body.id);
      expect(got.headers['x-adops-event']).toBe('campaign.behind');
      expect(got.body).toMatchObject({ goal_event: expect.any(String), provisional: false });
      expect(got.body.pace).toBeLessThan(0.9);
      expect(got.body).not.toHaveProperty('state');
    }
    // Told today; tomorrow (UTC) each one still behind is told again.
    const wh = warehouseOf(h.db.pool, TEST_SCHEMA);
    expect(await behindEvents(wh)).toEqual([]);
    expect(await behindEvents(wh, new Date(Date.now() + 86_400_000))).toHaveLength(rows.length);
  });
});
