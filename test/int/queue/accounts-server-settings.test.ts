// Issue 24's acceptance: two accounts in one deployment whose servers want different things.
// Account php's server reads only `dimensions[]=` (the emulator's brackets-only form: given
// repeated `dimensions=` it keeps the last one and answers a one-level report) and is asked with
// `compression: none`; account plain's server takes the default form and is asked for gzip. Both
// servers serve gzip to whoever asks. A real worker over Redis and Postgres backfills and syncs
// both accounts: each account's rows equal what its own server serves, row for row, and each
// server saw only its own account's Accept-Encoding.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/platform/config/env.js';
import { loadJobs, type JobSet } from '../../../src/platform/config/jobs.js';
import { startEmulator, type RequestLogEntry, type RunningEmulator } from '../../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { openQueues, type Queues } from '../../../src/platform/queue/queues.js';
import { enqueueEntitySync, waitForEntitySync } from '../../../src/catalogue/enqueue.js';
import { startWorker, type RunningWorker } from '../../../src/worker/start.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { runCli } from '../../helpers/run-cli.js';
import { days, fetchTruth, verify } from '../../helpers/reliability/truth.js';
import { lastDays, quietLogger } from '../../helpers/pipeline.js';

const DATA = { cellsPerDay: 25, lateDataDays: 0, catalogue: { campaigns: 6, creativesPerCampaign: 2 } };

let db: TestDatabase;
let php: RunningEmulator;
let plain: RunningEmulator;
const seen: Record<'php' | 'plain', RequestLogEntry[]> = { php: [], plain: [] };
let config: Config;
let jobs: JobSet;
let queues: Queues;
let worker: RunningWorker | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  db.pool.on('error', () => undefined);
  php = await startEmulator({
    ...DATA,
    seed: 3,
    quirks: { reportParams: 'brackets', gzip: true },
    onRequest: (e) => seen.php.push(e),
  });
  plain = await startEmulator({
    ...DATA,
    seed: 5,
    quirks: { gzip: true },
    onRequest: (e) => seen.plain.push(e),
  });
  const file = join(mkdtempSync(join(tmpdir(), 'adops-server-settings-')), 'accounts.yaml');
  writeFileSync(
    file,
    [
      'accounts:',
      '  - name: php',
      `    base_url: "${php.url}"`,
      '    api_key_env: DEMO_KEY',
      '    report_params: brackets',
      '    compression: none',
      '    days_per_request: 2',
      '  - name: plain',
      `    base_url: "${plain.url}"`,
      '    api_key_env: DEMO_KEY',
      '',
    ].join('\n'),
  );
  config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_ACCOUNTS_FILE: file,
    DEMO_KEY: 'demo-key',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '200',
    ADOPS_HTTP_MAX_BACKOFF_MS: '50',
    LOG_LEVEL: 'warn',
  });
  const all = loadJobs('jobs');
  // Two and three dimensions: a server that keeps only the last `dimensions=` misreads both.
  jobs = {
    ...all,
    reports: all.reports.filter((r) => r.name === 'daily_campaign' || r.name === 'daily_creative'),
    entities: [],
  };
  queues = await openQueues(config);
});

afterAll(async () => {
  await worker?.close(2_000);
  await queues?.close();
  await php?.close();
  await plain?.close();
  await db?.drop();
});

/** The Accept-Encoding values a server saw on `endpoint`'s requests. */
const encodings = (log: readonly RequestLogEntry[], endpoint: RegExp) =>
  [...new Set(log.filter((e) => endpoint.test(e.endpoint)).map((e) => e.acceptEncoding))].sort();

it("loads each account's reports exactly with its own request form, and asks each server with its own compression", async () => {
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
  const { from, to } = lastDays(4);
  const result = await enqueueBackfill(queues.pulls, jobs.reports, from, to, 'newest-first', config.accounts);
  // 4 days of 2 reports: php asks 2 days at once (its days_per_request), plain 7 (the default).
  expect(result.added).toBe(2 * 2 + 2 * 1);
  const outcome = await waitForPulls(queues.pulls, result.pulls, { pollMs: 100 });
  expect(outcome.failed).toEqual([]);

  // Each account's catalogue sync goes through its own client too.
  for (const account of ['php', 'plain']) {
    const { jobId } = await enqueueEntitySync(queues.syncs, account);
    const synced = await waitForEntitySync(queues.syncs, jobId, { timeoutMs: 30_000 });
    expect(synced.campaigns).toBe(6);
  }

  // What each server was asked, before the test's own reads below add to the logs.
  expect(encodings(seen.php, /^GET \/v2\/reports$/)).toEqual(['identity']);
  expect(encodings(seen.php, /^GET \/v2\/campaigns/)).toEqual(['identity']);
  expect(encodings(seen.plain, /^GET \/v2\/reports$/)).toEqual(['gzip']);
  expect(encodings(seen.plain, /^GET \/v2\/campaigns/)).toEqual(['gzip']);

  const periods = days(from, to);
  const truth = {
    php: await fetchTruth(php.url, 'demo-key', jobs.reports, periods, { dimensionsEncoding: 'brackets' }),
    plain: await fetchTruth(plain.url, 'demo-key', jobs.reports, periods),
  };
  for (const account of ['php', 'plain'] as const) {
    const verdict = await verify(db.pool, TEST_SCHEMA, jobs.reports, truth[account], undefined, account);
    expect(verdict.problems, account).toEqual([]);
    expect(verdict, account).toMatchObject({ exact: 8, total: 8, duplicates: 0 });
  }
  // The two servers' data differ, so each comparison tells the accounts apart; and php's server,
  // asked in the default form, answers other reports: without its report_params nothing matches.
  expect(truth.php).not.toEqual(truth.plain);
  await expect(fetchTruth(php.url, 'demo-key', jobs.reports, periods.slice(0, 1))).rejects.toThrow();
}, 120_000);

it("waits for an account's server as long as its headers_timeout_ms says, not the variable's", async () => {
  // Accepts connections and never answers: a request ends at its headers timeout.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const port = (silent.address() as { port: number }).port;
    const file = join(mkdtempSync(join(tmpdir(), 'adops-server-timeout-')), 'accounts.yaml');
    writeFileSync(
      file,
      [
        `- { name: slow, base_url: "http://127.0.0.1:${port}/v2", api_key_env: K, headers_timeout_ms: 300 }`,
        `- { name: plain, base_url: "${plain.url}", api_key_env: K }`,
      ].join('\n'),
    );
    const started = performance.now();
    const run = await runCli(['pull', '--account', 'slow', '--dimensions', 'day', '--from', '2026-01-05'], {
      ADOPS_ACCOUNTS_FILE: file,
      K: 'demo-key',
      ADOPS_HTTP_ATTEMPTS: '1',
      // Every other account waits this long; slow's own 300 ms ends its pull well before.
      ADOPS_HTTP_HEADERS_TIMEOUT_MS: '15000',
      LOG_LEVEL: 'silent',
    });
    const seconds = (performance.now() - started) / 1000;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/timeout/i);
    expect(seconds).toBeLessThan(7);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});
