// The catalogue sync through real workers against a misbehaving emulator: 429s are waited out in
// place (the job never goes back to the queue), one 429 holds every worker's requests, and a
// hostile server costs requests, never the sync's progress or its result.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../helpers/api-client.js';
import { main } from '../../../src/cli/main.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { enqueueEntitySync } from '../../../src/catalogue/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { expectTablesMatchApi, typedTables } from './expect-tables.js';
import { createSyncHarness, type SyncHarness } from './sync-harness.js';

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A plain client of the harness' emulator, for reading what the API holds. */
function reader(harness: SyncHarness) {
  return createApiClient({ baseUrl: harness.emulator.url, apiKey: 'demo-key', auth: 'bearer' });
}

describe('a queued catalogue sync', () => {
  it('waits out 429s in place: it finishes in its first try and every 429 cost one request', async () => {
    h = await createSyncHarness({
      emulator: {
        catalogue: { campaigns: 40, creativesPerCampaign: 2 },
        faults: { rateLimitRate: 0.2, retryAfterSeconds: 0, paths: ['/v2/campaigns'], seed: 3 },
      },
    });
    await h.worker();
    const { result, job } = await h.sync();
    const limited = h.requests.filter((r) => r.status === 429).length;
    expect(limited).toBeGreaterThanOrEqual(5);
    // Never thrown back to the queue: one start, and each 429 repeated exactly its own request.
    expect(job.attemptsStarted).toBe(1);
    expect(result).toMatchObject({ campaigns: 40, creatives: 80, requests: h.requests.length });
    expect(h.requests.length).toBe(41 + limited);
    h.emulator.setFaults({});
    const api = reader(h);
    try {
      await expectTablesMatchApi(h.db.pool, TEST_SCHEMA, api);
    } finally {
      await api.close();
    }
  });

  it("resumes a try that failed in the job's next attempt, reading no listing twice", async () => {
    h = await createSyncHarness({
      emulator: { catalogue: { campaigns: 30, creativesPerCampaign: 2 } },
      env: { ADOPS_SYNC_ATTEMPTS: '2' },
    });
    const api = reader(h);
    const [, , victim] = await api.listCampaigns();
    await api.close();
    if (victim === undefined) throw new Error('no campaign');
    h.emulator.resetStats();
    // Two 500s spend the request's two attempts: the first try fails, the next one succeeds.
    h.emulator.override({
      path: `/v2/campaigns/${victim.campaign_id}/creatives`,
      status: 500,
      body: '{}',
      times: 2,
    });
    await h.worker();
    const { result, job } = await h.sync();
    expect(job.attemptsMade).toBeGreaterThanOrEqual(1);
    expect(job.attemptsStarted).toBe(2);
    expect(result).toMatchObject({ campaigns: 30, creatives: 60 });
    expect(result.resumedPages).toBeGreaterThanOrEqual(1);
    const requests = h.emulator.stats().requests;
    expect(requests['GET /v2/campaigns']).toBe(1);
    expect(requests['GET /v2/campaigns/:id/creatives']).toBe(30 + 2);
  });

  it('holds the requests of every worker through one 429 pause, pulls included', async () => {
    h = await createSyncHarness({
      emulator: { catalogue: { campaigns: 10, creativesPerCampaign: 2 }, faults: { latencyMs: 10 } },
      // Slow enough that the pulls outlast the pause.
      env: { ADOPS_RATE_LIMIT: '50' },
    });
    const harness = h;
    await Promise.all([harness.worker(), harness.worker()]);
    const reports = loadJobs('jobs').reports;
    const backfill = await enqueueBackfill(harness.queues.pulls, reports, '2025-11-01', '2025-11-30');
    await until(() => harness.requests.some((r) => r.endpoint === 'GET /v2/reports'));
    harness.emulator.override({
      path: '/v2/campaigns',
      status: 429,
      headers: { 'retry-after': '2', 'content-type': 'application/json' },
      body: JSON.stringify({ error: 'rate_limited', message: 'slow down' }),
    });
    const { job } = await harness.sync();
    expect(job.attemptsStarted).toBe(1);
    const limited = harness.requests.find((r) => r.status === 429);
    if (limited === undefined) throw new Error('the 429 was not served');
    const arrived = (r: { at: number; ms: number }) => r.at - r.ms;
    // Requests already sent when the 429 left the server may still arrive, and so may those sent
    // before its worker has recorded the pause (800 ms of slack for a busy machine: workers and
    // emulator share one event loop); after that, nothing from either worker until Retry-After
    // (2 s) has passed.
    const during = harness.requests.filter(
      (r) => arrived(r) > limited.at + 800 && arrived(r) < limited.at + 2_000,
    );
    expect(during).toEqual([]);
    const after = harness.requests.filter((r) => arrived(r) >= limited.at + 2_000);
    expect(after.some((r) => r.endpoint === 'GET /v2/reports')).toBe(true);
    expect(after.some((r) => r.endpoint.startsWith('GET /v2/campaigns'))).toBe(true);
    const outcome = await waitForPulls(harness.queues.pulls, backfill.pulls, { pollMs: 100 });
    expect(outcome.failed).toEqual([]);
  });

  it("holds a running sync's requests through the pause of a pull's 429", async () => {
    h = await createSyncHarness({
      emulator: {
        catalogue: { campaigns: 80, creativesPerCampaign: 1 },
        // A sync of about two seconds, so the pull's 429 lands in the middle of it.
        faults: { latencyMs: 80, paths: ['/v2/campaigns/'] },
      },
    });
    const harness = h;
    await harness.worker();
    harness.emulator.override({
      path: '/v2/reports',
      status: 429,
      headers: { 'retry-after': '2', 'content-type': 'application/json' },
      body: JSON.stringify({ error: 'rate_limited', message: 'slow down' }),
    });
    const { jobId } = await enqueueEntitySync(harness.queues.syncs);
    await until(() => harness.requests.filter((r) => r.endpoint.endsWith('/creatives')).length >= 10);
    const reports = loadJobs('jobs').reports.slice(0, 1);
    const backfill = await enqueueBackfill(harness.queues.pulls, reports, '2025-11-01', '2025-11-01');
    const { result } = await harness.wait(jobId);
    expect(result.campaigns).toBe(80);
    const limited = harness.requests.find((r) => r.status === 429);
    if (limited === undefined) throw new Error('the 429 was not served');
    const arrived = (r: { at: number; ms: number }) => r.at - r.ms;
    // As above: 800 ms for the pause to be recorded on a busy machine, then silence until 2 s.
    const during = harness.requests.filter(
      (r) => arrived(r) > limited.at + 800 && arrived(r) < limited.at + 2_000,
    );
    expect(during).toEqual([]);
    expect(
      harness.requests.some((r) => arrived(r) >= limited.at + 2_000 && r.endpoint.endsWith('/creatives')),
    ).toBe(true);
    expect((await waitForPulls(harness.queues.pulls, backfill.pulls, { pollMs: 100 })).failed).toEqual([]);
  });

  it('under a hostile server (faults and string values) syncs, then after a delete syncs again, exactly as a faithful one', async () => {
    const hostile = (seed: number) => ({
      failRate: 0.25,
      rateLimitRate: 0.05,
      // Retry-After 0 keeps the test quick; the pause itself is tested above.
      retryAfterSeconds: 0,
      dropRate: 0.03,
      seed,
    });
    h = await createSyncHarness({
      emulator: {
        seed: 8,
        catalogue: { campaigns: 250 },
        faults: hostile(21),
        quirks: { stringValues: true, emptyAsArray: true, sortKeys: true },
      },
    });
    const harness = h;
    await harness.worker();
    const first = await harness.sync();
    expect(first.job.attemptsStarted).toBe(1);
    expect(first.result).toMatchObject({ campaigns: 250, deleted: 0, problems: 0 });
    const faults = harness.emulator.stats().faults;
    expect((faults.fail ?? 0) + (faults.drop ?? 0)).toBeGreaterThan(30);
    expect(faults.rate_limit ?? 0).toBeGreaterThan(3);

    const api = reader(harness);
    try {
      harness.emulator.setFaults({});
      const page = await api.listCampaigns({ limit: 1, offset: 7 });
      const doomed = Number(page[0]?.campaign_id);
      await api.deleteCampaign(doomed);
      harness.emulator.setFaults(hostile(22));
      const second = await harness.sync();
      expect(second.job.attemptsStarted).toBe(1);
      expect(second.result).toMatchObject({
        campaigns: 249,
        deleted: 1 + (await creativesOf(harness, doomed)),
      });
      const hostileTables = await typedTables(harness.db.pool, TEST_SCHEMA);

      // The same catalogue synced from a faithful, fault-free server gives the same rows.
      harness.emulator.setFaults({});
      harness.emulator.setQuirks({});
      await harness.sync();
      expect(hostileTables).toEqual(await typedTables(harness.db.pool, TEST_SCHEMA));
      await expectTablesMatchApi(harness.db.pool, TEST_SCHEMA, api);
      const { rows } = await harness.db.pool.query(
        `SELECT campaign_id::int AS id FROM ${TEST_SCHEMA}.campaigns WHERE deleted_at IS NOT NULL`,
      );
      expect(rows).toEqual([{ id: doomed }]);
    } finally {
      await api.close();
    }
  });

  it('adops sync --wait draws campaigns done of total, requests and an ETA on stderr, and prints one line on stdout', async () => {
    h = await createSyncHarness({
      emulator: {
        catalogue: { campaigns: 60, creativesPerCampaign: 1 },
        // About a second of listing, so several progress updates reach the command.
        faults: { latencyMs: 60, paths: ['/v2/campaigns/'] },
      },
    });
    await h.worker();
    const stdout = new PassThrough();
    // A terminal, as far as the command can tell: it draws the bar.
    const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 160 });
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await main(
      ['node', 'adops', 'sync', '--wait'],
      { ...h.env, LOG_LEVEL: 'silent' },
      stdout,
      stderr,
    );
    expect(code).toBe(0);
    expect(out).toMatch(
      /^enqueued entity sync s-[0-9a-z]+\nsynced 60 campaigns and 60 creatives \(0 newly deleted, 0 revived\)\n$/,
    );
    expect(err).toMatch(/sync creatives \|.*\| \d+\/60 campaigns \| \d+ requests \| ETA \d+s/);
  });
});

/** Resolves once `probe` holds, checking on each turn of a short timer (the request log has no event). */
async function until(probe: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Creatives stored for campaign `id`, live or soft-deleted. */
async function creativesOf(harness: SyncHarness, id: number): Promise<number> {
  const { rows } = await harness.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${TEST_SCHEMA}.creatives WHERE campaign_id = $1`,
    [id],
  );
  return rows[0]?.n ?? 0;
}
