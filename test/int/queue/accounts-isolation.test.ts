// Three accounts in one deployment, one of them down for the whole run (a server that accepts
// connections and never answers, the worst kind: each request holds on until its timeout). The
// other two accounts' backfills must finish on time: the dead account's pulls never hold all the
// worker's slots, and its failures hold only its own pulls. One request per period (days_per_request:
// 1): what is measured is many pulls sharing the slots.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/platform/config/env.js';
import { loadJobs, type JobSet } from '../../../src/platform/config/jobs.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { pullAccount } from '../../../src/platform/queue/jobs.js';
import { openQueues, type Queues } from '../../../src/platform/queue/queues.js';
import { startWorker, type RunningWorker } from '../../../src/worker/start.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { capturedLogger, lastDays, quietLogger } from '../../helpers/pipeline.js';

let db: TestDatabase;
let emulators: RunningEmulator[] = [];
let dead: Server;
const sockets: Socket[] = [];
let config: Config;
let jobs: JobSet;
let queues: Queues;
let worker: RunningWorker | undefined;
let stormConfig: Config;
let stormWorker: RunningWorker | undefined;
let keyConfig: Config;
let keyWorker: RunningWorker | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  db.pool.on('error', () => undefined);
  emulators = await Promise.all(
    [3, 5].map((seed) => startEmulator({ seed, cellsPerDay: 25, lateDataDays: 0 })),
  );
  // Answers every request 429 with a Retry-After of 5 s: a 429 storm for the whole run.
  emulators.push(
    await startEmulator({
      seed: 7,
      cellsPerDay: 25,
      lateDataDays: 0,
      faults: { rateLimitRate: 1, retryAfterSeconds: 5 },
    }),
  );
  // Accepts every connection and never answers: each request waits for its headers timeout.
  dead = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  const port = (dead.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'adops-accounts-'));
  const file = join(dir, 'accounts.yaml');
  writeFileSync(
    file,
    [
      `- { name: alpha, base_url: "${emulators[0]!.url}", api_key_env: DEMO_KEY, days_per_request: 1 }`,
      `- { name: beta, base_url: "${emulators[1]!.url}", api_key_env: DEMO_KEY, days_per_request: 1 }`,
      `- { name: gone, base_url: "http://127.0.0.1:${port}/v2", api_key_env: DEMO_KEY, days_per_request: 1 }`,
    ].join('\n'),
  );
  const keyFile = join(dir, 'keys.yaml');
  writeFileSync(
    keyFile,
    [
      `- { name: alpha, base_url: "${emulators[0]!.url}", api_key_env: DEMO_KEY, days_per_request: 1 }`,
      `- { name: badkey, base_url: "${emulators[1]!.url}", api_key_env: BAD_KEY, days_per_request: 1 }`,
    ].join('\n'),
  );
  keyConfig = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_ACCOUNTS_FILE: keyFile,
    DEMO_KEY: 'demo-key',
    BAD_KEY: 'a-key-the-server-refuses',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '200',
    LOG_LEVEL: 'warn',
  });
  const stormFile = join(dir, 'storm.yaml');
  writeFileSync(
    stormFile,
    [
      `- { name: alpha, base_url: "${emulators[0]!.url}", api_key_env: DEMO_KEY, days_per_request: 1 }`,
      `- { name: storm, base_url: "${emulators[2]!.url}", api_key_env: DEMO_KEY, days_per_request: 1 }`,
    ].join('\n'),
  );
  stormConfig = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_ACCOUNTS_FILE: stormFile,
    DEMO_KEY: 'demo-key',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '200',
    ADOPS_HTTP_MAX_BACKOFF_MS: '50',
    LOG_LEVEL: 'warn',
  });
  config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_ACCOUNTS_FILE: file,
    DEMO_KEY: 'demo-key',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '200',
    // Each request to the dead account holds its worker slot this long, times the attempts.
    ADOPS_HTTP_HEADERS_TIMEOUT_MS: '3000',
    ADOPS_HTTP_ATTEMPTS: '2',
    ADOPS_HTTP_MAX_BACKOFF_MS: '50',
    LOG_LEVEL: 'warn',
  });
  const all = loadJobs('jobs');
  const report = all.reports.find((r) => r.name === 'daily_campaign');
  if (report === undefined) throw new Error('jobs/ has no daily_campaign');
  jobs = { ...all, reports: [report], entities: [] };
  queues = await openQueues(config);
});

afterAll(async () => {
  await worker?.close(1_000);
  await stormWorker?.close(1_000);
  await keyWorker?.close(1_000);
  await queues?.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => dead?.close(() => resolve()));
  await Promise.all(emulators.map((e) => e.close()));
  await db?.drop();
});

it('finishes the backfills of two accounts on time while the third is down for the whole run', async () => {
  worker = await startWorker({
    config,
    jobs,
    pool: db.pool,
    logger: quietLogger,
    concurrency: 2,
    metrics: false,
    backoff: { baseMs: 50, maxMs: 400 },
    stall: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
  });
  const { from, to } = lastDays(10);
  // The accounts take turns in the queue: alpha, beta, gone, alpha, beta, gone, ...
  const result = await enqueueBackfill(queues.pulls, jobs.reports, from, to, 'newest-first', config.accounts);
  expect(result.added).toBe(30);
  const healthy = result.pulls.filter((p) => pullAccount(p.data) !== 'gone');
  expect(healthy).toHaveLength(20);

  const started = performance.now();
  const outcome = await waitForPulls(queues.pulls, healthy, { pollMs: 100 });
  const seconds = (performance.now() - started) / 1000;
  expect(outcome.failed).toEqual([]);
  expect(outcome.completed).toHaveLength(20);
  // Without isolation both slots sit on the dead account: its 10 pulls x 2 attempts x 3 s of
  // headers timeout over 2 slots is 30 s before the healthy accounts are done. With it, the dead
  // account holds one slot at most and is then held back: the healthy 20 pulls need a few seconds.
  expect(seconds).toBeLessThan(12);

  const { rows } = await db.pool.query<{ account: string; status: string; n: number }>(
    `SELECT account, status, count(*)::int AS n FROM ${TEST_SCHEMA}.report_loads GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  const loaded = (a: string) => rows.find((r) => r.account === a && r.status === 'loaded')?.n ?? 0;
  expect(loaded('alpha')).toBe(10);
  expect(loaded('beta')).toBe(10);
  expect(loaded('gone')).toBe(0);
  // Each account's rows are its own emulator's: two seeds, two different sets of numbers.
  const { rows: sums } = await db.pool.query<{ account: string; impressions: string }>(
    `SELECT account, sum(impressions)::text AS impressions FROM ${TEST_SCHEMA}.report_daily_campaign GROUP BY 1 ORDER BY 1`,
  );
  expect(sums.map((s) => s.account)).toEqual(['alpha', 'beta']);
  expect(sums[0]!.impressions).not.toBe(sums[1]!.impressions);
}, 60_000);

it("finishes one account's backfill on time while another meets a 429 storm for the whole run", async () => {
  stormWorker = await startWorker({
    config: stormConfig,
    jobs,
    pool: db.pool,
    logger: quietLogger,
    concurrency: 2,
    metrics: false,
    backoff: { baseMs: 50, maxMs: 400 },
    stall: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
  });
  const stormQueues = await openQueues(stormConfig);
  try {
    const { from, to } = lastDays(20);
    const result = await enqueueBackfill(
      stormQueues.pulls,
      jobs.reports,
      from,
      to,
      'newest-first',
      stormConfig.accounts,
    );
    const alpha = result.pulls.filter((p) => pullAccount(p.data) === 'alpha');
    expect(alpha).toHaveLength(20);
    const started = performance.now();
    const outcome = await waitForPulls(stormQueues.pulls, alpha, { pollMs: 100 });
    const seconds = (performance.now() - started) / 1000;
    expect(outcome.failed).toEqual([]);
    // Each 429 of the storm asks for 5 s. Paused as one queue (the single-account way), alpha would
    // wait out a pause for each storm pull it meets; paused per account, it never waits.
    expect(seconds).toBeLessThan(5);
    // The storm account's pulls went back to the queue, delayed, without spending attempts.
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${TEST_SCHEMA}.report_loads WHERE account = 'storm'`,
    );
    expect(rows[0]?.n).toBe(0);
    expect(await stormQueues.pulls.getDelayedCount()).toBeGreaterThan(0);
  } finally {
    await stormQueues.close();
  }
}, 60_000);

it("logs each hold of an account whose key fails once, naming that account's own settings, as its 401 hint does", async () => {
  const { logger, lines } = capturedLogger(keyConfig);
  keyWorker = await startWorker({
    config: keyConfig,
    jobs,
    pool: db.pool,
    logger,
    concurrency: 2,
    metrics: false,
    backoff: { baseMs: 50, maxMs: 400 },
    stall: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
  });
  const keyQueues = await openQueues(keyConfig);
  try {
    const { from, to } = lastDays(2);
    const badkey = keyConfig.accounts.filter((a) => a.name === 'badkey');
    const result = await enqueueBackfill(keyQueues.pulls, jobs.reports, from, to, 'newest-first', badkey);
    expect(result.added).toBe(2);
    // The second pull waits out the hold of the first one's 401 (1 s), then fails too (a hold of 2 s).
    const outcome = await waitForPulls(keyQueues.pulls, result.pulls, { pollMs: 100 });
    expect(outcome.failed).toHaveLength(2);
    const held = lines.filter((l) => l.includes('held back'));
    // One line per hold, none per pull put back while it lasts.
    expect(held).toHaveLength(2);
    for (const line of held) {
      expect(JSON.parse(line)).toMatchObject({ account: 'badkey', level: 40 });
      expect(line).toContain('api_key_file (or api_key_env)');
      expect(line).toContain('adops doctor --account badkey');
      expect(line).not.toContain('ADOPS_API_KEY');
    }
    expect(held.map((l) => (JSON.parse(l) as { heldMs: number }).heldMs)).toEqual([1_000, 2_000]);
    const failed = lines.filter((l) => l.includes('"msg":"pull failed"'));
    expect(failed).toHaveLength(2);
    for (const line of failed) {
      expect(line).toContain('HTTP 401');
      expect(line).toContain('of account badkey in');
      expect(line).toContain('adops doctor --account badkey');
      expect(line).not.toContain('ADOPS_API_KEY');
    }
  } finally {
    await keyQueues.close();
  }
}, 60_000);
