// A server that echoes the API key back: in a report body, a catalogue listing, a JSON error body,
// an HTML error page and a response header. Pulls succeed, pulls fail for good and a catalogue sync
// runs through a real worker; afterwards the key (the canary) must be in no log line, no Redis key
// or value, no pg_dump of the database (archived bodies decompressed) and no dashboard page. Once
// with ADOPS_API_KEY and an in-process worker, once with ADOPS_API_KEY_FILE and the adops commands.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ECHO_FORMS, ECHO_HEADER, ECHO_PLACES, type RunningEmulator } from '../../../src/emulator/index.js';
import { startDashboard } from '../../../src/cli/dashboard.js';
import { loadConfig } from '../../../src/platform/config/env.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { openQueues } from '../../../src/platform/queue/queues.js';
import { startWorker } from '../../../src/worker/start.js';
import { ENTITY_QUEUE, REPORT_QUEUE, TICK_QUEUE } from '../../../src/platform/queue/jobs.js';
import { qualified } from '../../../src/platform/pg/handle.js';
import { spawnCli } from '../../helpers/cli.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { canaryKey, capturedLogger } from '../../helpers/pipeline.js';
import { holdsSecret, scanForSecret } from '../../helpers/reliability/secrets.js';
import { EACH_PERIOD, FROM, openSuite, TO, type Suite } from '../../helpers/reliability/suite.js';
import { verify } from '../../helpers/reliability/truth.js';
import { runCli } from '../../helpers/run-cli.js';

let suite: Suite;
const book = figureBook('echoed-key');
const ECHO_EVERYWHERE = { echoKey: [...ECHO_PLACES], htmlErrors: true };
// A report request the client would send; its answer shows what the emulator echoes.
const REPORT_PATH = `/reports?date_from=${FROM}&date_until=${FROM}&dimensions=day`;
// Injected on report requests: JSON 500s, HTML 502 pages and malformed 200s, all with the key.
const FAULTS = { failRate: 0.3, htmlShare: 0.5, malformedRate: 0.1, paths: ['/v2/reports'], seed: 2 };

// A second key the emulator accepts, with the characters encoders treat differently: `/` (PHP's
// json_encode writes `\/`), `+` and `-` (a %2D leaves the rest of the key readable).
const ODD_KEY = `${canaryKey()}/+x`;

beforeAll(async () => {
  suite = await openSuite({ quirks: ECHO_EVERYWHERE, keys: [{ key: ODD_KEY }] });
});
afterAll(async () => {
  book.flush(inject('runId'));
  await suite?.close();
});

/** The emulator echoes back whichever key it was sent, in every place: shown by direct requests. */
async function expectEchoes(emulator: RunningEmulator, key: string): Promise<void> {
  const headers = { authorization: `Bearer ${key}` };
  const ok = await fetch(`${emulator.url}${REPORT_PATH}`, { headers });
  expect(ok.status).toBe(200);
  expect(ok.headers.get(ECHO_HEADER)).toBe(key);
  expect(await ok.text()).toContain(key);
  const listing = await fetch(`${emulator.url}/campaigns?limit=1`, { headers });
  expect(await listing.text()).toContain(key);
  const refused = await fetch(`${emulator.url}/reports?date_from=x`, { headers });
  expect(refused.status).toBe(400);
  expect(await refused.text()).toContain(key);
}

/** The text of the dashboard's page and of its API's job lists, every queue and status. */
async function dashboardText(prefix: string): Promise<{ text: string; failedJobs: number }> {
  const dashboard = await startDashboard({
    redis: { kind: 'single', url: REDIS_URL },
    prefix,
    port: 0,
    host: '127.0.0.1',
    readOnly: true,
  });
  try {
    const texts = [await (await fetch(dashboard.url)).text()];
    let failedJobs = 0;
    for (const queue of [REPORT_QUEUE, ENTITY_QUEUE, TICK_QUEUE])
      for (const status of ['failed', 'completed', 'latest']) {
        const url = `${dashboard.url}api/queues?activeQueue=${queue}&status=${status}&page=1&jobsPerPage=100`;
        const body = await (await fetch(url)).text();
        texts.push(body);
        if (status === 'failed') failedJobs += (body.match(/"failedReason":"[^"]/g) ?? []).length;
        texts.push(await (await fetch(`${dashboard.url}queue/${queue}?status=${status}`)).text());
      }
    return { text: texts.join('\n'), failedJobs };
  } finally {
    await dashboard.close();
  }
}

/** Searches logs, Redis, pg_dump and the dashboard of one case for the key; returns the places found. */
async function searchEverywhere(
  db: TestDatabase,
  prefix: string,
  logLines: readonly string[],
): Promise<{ found: string[]; note: string }> {
  const scan = await scanForSecret({
    secret: suite.key,
    logLines,
    redis: [{ url: REDIS_URL, prefix }],
    database: { url: db.url, pool: db.pool },
  });
  const dashboard = await dashboardText(prefix);
  const found = [...scan.found];
  if (dashboard.text.includes(suite.key)) found.push('dashboard');
  // A scan of nothing proves nothing: each place must have held what the key could leak into.
  expect(scan.searched.redisKeys).toBeGreaterThan(0);
  expect(scan.searched.rawBodies).toBeGreaterThan(0);
  expect(scan.searched.logLines).toBeGreaterThan(10);
  expect(dashboard.failedJobs).toBeGreaterThan(0);
  const s = scan.searched;
  return {
    found,
    note: `key found in ${found.length} places; searched ${s.logLines} log lines, ${s.redisKeys} Redis keys, a ${s.dumpBytes}-byte pg_dump, ${s.rawBodies} archived bodies and ${dashboard.text.length} characters of dashboard`,
  };
}

/** report_loads.error of the failed loads of a case. */
async function failedErrors(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ error: string }>(
    `SELECT error FROM ${qualified(TEST_SCHEMA, 'report_loads')} WHERE status = 'failed'`,
  );
  return rows.map((r) => r.error);
}

describe('a server that echoes the API key', () => {
  it('is redacted from every sink: ADOPS_API_KEY, a worker in this process, pulls, failures and a sync', async () => {
    const started = Date.now();
    const { db, prefix, env } = await suite.newCase();
    suite.emulator.setQuirks(ECHO_EVERYWHERE);
    await expectEchoes(suite.emulator, suite.key);
    // The product's own worker: its API clients for pulls and for syncs, built from the config.
    const config = loadConfig({ ...env, LOG_LEVEL: 'trace' });
    const { logger, lines: logLines } = capturedLogger(config);
    const queues = await openQueues(config);
    const worker = await startWorker({
      config,
      jobs: suite.jobs,
      pool: db.pool,
      logger,
      backoff: { baseMs: 20, maxMs: 200 },
      metrics: false,
    });
    const cli: string[] = [];
    let failed = 0;
    try {
      suite.emulator.resetStats();
      suite.emulator.setFaults(FAULTS);
      const { pulls } = await enqueueBackfill(
        queues.pulls,
        suite.reports,
        FROM,
        TO,
        'newest-first',
        EACH_PERIOD,
      );
      const faulty = await waitForPulls(queues.pulls, pulls, { pollMs: 50 });
      expect(faulty.completed.length).toBeGreaterThan(0);
      // The same quirks, but GET /reports parameters read only from a JSON body: 400, final.
      suite.emulator.setFaults({});
      suite.emulator.setQuirks({ ...ECHO_EVERYWHERE, reportParams: 'json-body' });
      const refused = await enqueueBackfill(
        queues.pulls,
        suite.reports.slice(0, 1),
        FROM,
        FROM,
        'newest-first',
        EACH_PERIOD,
      );
      const final = await waitForPulls(queues.pulls, refused.pulls, { pollMs: 50 });
      expect(final.failed).toHaveLength(1);
      expect(final.failed[0]?.reason).toContain('[REDACTED]');
      failed = faulty.failed.length + final.failed.length;
      suite.emulator.setQuirks(ECHO_EVERYWHERE);
      const sync = await runCli(['sync', '--wait', '--timeout', '60'], env);
      cli.push(sync.stdout, sync.stderr);
      expect(sync.code).toBe(0);
      const status = await runCli(['status'], env);
      cli.push(status.stdout, status.stderr);
      // The key went back in every kind of answer: success bodies, JSON errors, HTML pages,
      // malformed bodies and headers.
      const faults = suite.emulator.stats().faults;
      expect(faults.echo_key).toBeGreaterThan(pulls.length);
      expect(faults).toMatchObject({ fail: expect.any(Number), malformed: expect.any(Number) });
    } finally {
      suite.emulator.setFaults({});
      suite.emulator.setQuirks(ECHO_EVERYWHERE);
      await worker.close(5_000);
      await queues.close();
    }
    expect((await failedErrors(db)).some((e) => e.includes('[REDACTED]'))).toBe(true);
    const lines = [...logLines, ...cli.flatMap((t) => t.split('\n'))];
    expect(lines.some((l) => l.includes('[REDACTED]'))).toBe(true);
    const { found, note } = await searchEverywhere(db, prefix, lines);
    const v = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    expect(v.duplicates).toBe(0);
    book.add({
      id: 'secrets/echoed-key',
      title: 'API key echoed by the server in bodies, errors, pages and headers',
      injected: `canary key echoed in every answer; 30% 5xx (half HTML pages), 10% malformed 200s, then 400s; LOG_LEVEL=trace`,
      periodsExact: v.exact,
      periodsTotal: v.total,
      duplicates: v.duplicates,
      retries: 0,
      failedAsExpected: failed,
      notes: note,
      ms: Date.now() - started,
    });
    expect(found).toEqual([]);
  });

  it('is redacted from every sink: ADOPS_API_KEY_FILE, the adops worker, backfill and sync commands', async () => {
    const { db, prefix, env } = await suite.newCase();
    const dir = mkdtempSync(join(tmpdir(), 'adops-key-'));
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${suite.key}\n`, { mode: 0o600 });
    const { ADOPS_API_KEY: _direct, ...rest } = env;
    const fileEnv = { ...rest, ADOPS_API_KEY_FILE: keyFile, LOG_LEVEL: 'trace' };
    suite.emulator.setQuirks(ECHO_EVERYWHERE);
    const worker = spawnCli(['worker', '--concurrency', '2'], fileEnv);
    const outputs: string[] = [];
    try {
      await worker.waitFor(/"msg":"worker started"/);
      suite.emulator.setFaults(FAULTS);
      const backfill = ['backfill', '--report', 'daily_campaign', '--from', FROM, '--to', TO, '--wait'];
      const faulty = await runCli(backfill, fileEnv);
      outputs.push(faulty.stdout, faulty.stderr);
      suite.emulator.setFaults({});
      suite.emulator.setQuirks({ ...ECHO_EVERYWHERE, reportParams: 'json-body' });
      const refused = await runCli(
        ['backfill', '--report', 'daily_campaign', '--from', FROM, '--to', FROM, '--wait'],
        fileEnv,
      );
      outputs.push(refused.stdout, refused.stderr);
      expect(refused.code).toBe(1);
      suite.emulator.setQuirks(ECHO_EVERYWHERE);
      const sync = await runCli(['sync', '--wait', '--timeout', '60'], fileEnv);
      outputs.push(sync.stdout, sync.stderr);
      expect(sync.code).toBe(0);
      const status = await runCli(['status', '--json'], fileEnv);
      outputs.push(status.stdout, status.stderr);
    } finally {
      suite.emulator.setQuirks(ECHO_EVERYWHERE);
      suite.emulator.setFaults({});
      worker.child.kill('SIGTERM');
      await worker.exited;
      rmSync(dir, { recursive: true, force: true });
    }
    expect((await failedErrors(db)).some((e) => e.includes('[REDACTED]'))).toBe(true);
    const lines = [worker.stdout(), worker.stderr(), ...outputs].flatMap((t) => t.split('\n'));
    const { found } = await searchEverywhere(db, prefix, lines);
    expect(found).toEqual([]);
  });

  it('is redacted however the server writes it: \\/, %XX, %xx, \\uXXXX, \\uxxxx or a mix, in 200 and 400 bodies', async () => {
    const { db, prefix, env } = await suite.newCase();
    const config = loadConfig({ ...env, ADOPS_API_KEY: ODD_KEY, LOG_LEVEL: 'trace' });
    const { logger, lines } = capturedLogger(config);
    const queues = await openQueues(config);
    const worker = await startWorker({
      config,
      jobs: suite.jobs,
      pool: db.pool,
      logger,
      backoff: { baseMs: 20, maxMs: 200 },
      metrics: false,
    });
    const reasons: string[] = [];
    const report = suite.reports.slice(0, 1);
    const forms = ECHO_FORMS.filter((f) => f !== 'json');
    try {
      for (const form of forms) {
        const quirks = { echoKey: ['body' as const, 'error' as const, 'header' as const], echoKeyAs: form };
        suite.emulator.setQuirks(quirks);
        // The emulator does write the key this way: the body holds it encoded, not as is.
        const answer = await fetch(`${suite.emulator.url}${REPORT_PATH}`, {
          headers: { authorization: `Bearer ${ODD_KEY}` },
        });
        const text = await answer.text();
        expect(text.includes(ODD_KEY), form).toBe(false);
        expect(holdsSecret(text, ODD_KEY), form).toBe(true);
        const loaded = await enqueueBackfill(queues.pulls, report, FROM, FROM, 'newest-first', EACH_PERIOD);
        expect((await waitForPulls(queues.pulls, loaded.pulls, { pollMs: 50 })).completed, form).toHaveLength(
          1,
        );
        // GET /reports parameters read only from a JSON body: a 400 quoting the key, final.
        suite.emulator.setQuirks({ ...quirks, reportParams: 'json-body' });
        const refused = await enqueueBackfill(queues.pulls, report, TO, TO, 'newest-first', EACH_PERIOD);
        const final = await waitForPulls(queues.pulls, refused.pulls, { pollMs: 50 });
        expect(final.failed, form).toHaveLength(1);
        reasons.push(...final.failed.map((f) => f.reason));
      }
    } finally {
      suite.emulator.setQuirks(ECHO_EVERYWHERE);
      await worker.close(5_000);
      await queues.close();
    }
    const errors = await failedErrors(db);
    expect(errors).toHaveLength(forms.length);
    for (const text of [...errors, ...reasons]) {
      expect(text).toContain('[REDACTED]');
      expect(holdsSecret(text, ODD_KEY), text).toBe(false);
    }
    const scan = await scanForSecret({
      secret: ODD_KEY,
      logLines: lines,
      redis: [{ url: REDIS_URL, prefix }],
      database: { url: db.url, pool: db.pool },
    });
    expect(scan.searched.rawBodies).toBeGreaterThanOrEqual(forms.length);
    expect(scan.found).toEqual([]);
  });
});
