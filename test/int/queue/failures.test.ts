// Failures through the real worker: 4xx fail once with the typed error, 429 pauses the queue,
// and `adops status` shows what failed and why.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadConfig } from '../../../src/platform/config/env.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { collectStatus } from '../../../src/status/status.js';
import { renderStatus } from '../../../src/status/render.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let h: Harness | undefined;

/** Runs `adops` in-process with `env`, capturing its output. */
async function adops(args: string[], env: Record<string, string>) {
  const chunks = { out: [] as string[], err: [] as string[] };
  const sink = (into: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _enc, done) {
        into.push(chunk.toString());
        done();
      },
    });
  const code = await main(['node', 'adops', ...args], env, sink(chunks.out), sink(chunks.err));
  return { code, out: chunks.out.join(''), err: chunks.err.join('') };
}
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a pull answered 401', () => {
  it('fails once, unretried, with the hint as its reason, and status shows it', async () => {
    h = await createHarness({ apiKey: 'not-a-valid-key' });
    await h.worker();
    const { to } = lastDays(1);
    const run = await adops(
      ['backfill', '--report', 'daily_zone', '--from', to, '--to', to, '--wait'],
      h.env,
    );
    // --wait exits 1 listing each failed period with its reason.
    expect(run.code).toBe(1);
    expect(run.err).toContain('1 of 1 pulls failed');
    expect(run.err).toMatch(new RegExp(`daily_zone ${to}: ApiHttpError: .*HTTP 401.*check ADOPS_API_KEY`));
    expect(run.err).not.toContain('not-a-valid-key');
    const [job] = await h.queues.pulls.getFailed();
    expect(job?.failedReason).toMatch(/^ApiHttpError: .*HTTP 401/);
    expect(job?.attemptsMade).toBe(1);
    expect(h.emulator.stats().requests['GET /v2/reports']).toBe(1);

    const { rows } = await h.db.pool.query<{ status: string; error: string; http_attempts: number }>(
      `SELECT status, error, http_attempts FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'failed', http_attempts: 1 });
    expect(rows[0]?.error).toContain('HTTP 401');

    const status = await collectStatus(warehouseOf(h.db.pool, TEST_SCHEMA), h.jobs, h.queues, 3);
    const daily = status.reports.find((r) => r.report === 'daily_zone');
    expect(daily?.failed).toEqual([{ period: to, error: expect.stringContaining('HTTP 401') }]);
    expect(daily?.cells.at(-1)).toBe('failed');
    expect(status.queues?.['report-pulls']?.failed).toBe(1);
    const text = renderStatus(status);
    expect(text).toContain(`daily_zone ${to}: failed: ApiHttpError`);
    expect(text).toMatch(/daily_zone\s+··✗/);

    // The command itself, as a user runs it.
    const cli = await adops(['status', '--days', '3'], h.env);
    expect(cli.code).toBe(0);
    expect(cli.out).toContain(`daily_zone ${to}: failed: ApiHttpError`);
    expect(cli.out).toContain('check ADOPS_API_KEY');
    const json = await adops(['status', '--days', '3', '--json'], h.env);
    const parsed = JSON.parse(json.out) as { reports: Array<{ report: string; failed: unknown[] }> };
    expect(parsed.reports.find((r) => r.report === 'daily_zone')?.failed).toHaveLength(1);
  });
});

describe('a failed pull healed since', () => {
  it('no longer counts as failed in the queue counts of status: it is counted as healed', async () => {
    h = await createHarness({ apiKey: 'not-a-valid-key' });
    const bad = await h.worker();
    const { to } = lastDays(1);
    const args = ['--report', 'daily_zone', '--from', to, '--to', to, '--wait'];
    expect((await adops(['backfill', ...args], h.env)).code).toBe(1);
    await bad.close();
    // The key fixed: heal pulls the period again and it loads.
    await h.worker({ config: loadConfig({ ...h.env, ADOPS_API_KEY: 'demo-key' }) });
    const heal = await adops(['heal', '--days', '3', '--wait'], h.env);
    expect(heal.code, heal.err).toBe(0);
    // BullMQ keeps the failed job (14 days): it is still in the queue's failed set.
    expect(await h.queues.pulls.getFailedCount()).toBe(1);

    const status = await collectStatus(warehouseOf(h.db.pool, TEST_SCHEMA), h.jobs, h.queues, 3);
    expect(status.reports.find((r) => r.report === 'daily_zone')?.failed).toEqual([]);
    expect(status.queues?.['report-pulls']).toMatchObject({ failed: 0, failedHealed: 1 });
    const cli = await adops(['status', '--days', '3'], h.env);
    expect(cli.out).toMatch(/report-pulls +waiting 0, active 0, delayed 0, failed 0 \(1 more healed since\)/);
  });
});

describe('a pull answered 429', () => {
  it('pauses the queue for Retry-After without spending an attempt, then loads', async () => {
    h = await createHarness();
    h.emulator.override({
      path: '/v2/reports',
      status: 429,
      body: '{"message":"slow down"}',
      headers: { 'retry-after': '1' },
    });
    const worker = await h.worker();
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const { to } = lastDays(1);
    const started = Date.now();
    const { pulls } = await enqueueBackfill(h.queues.pulls, zone, to, to);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    expect(result.completed).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const job = await h.queues.pulls.getJob(pulls[0]!.jobId);
    expect(job?.attemptsMade).toBe(1);
    const metrics = await worker.metrics.registry.getSingleMetricAsString('adops_pulls_total');
    expect(metrics).toMatch(/outcome="rate_limited"} 1/);
    expect(metrics).toMatch(/outcome="loaded"} 1/);
    // A 429 is a pause, not a failure: nothing failed is recorded.
    const { rows } = await h.db.pool.query(`SELECT status FROM "${TEST_SCHEMA}".report_loads`);
    expect(rows).toEqual([{ status: 'loaded' }]);
  });
});

describe('transient failures', () => {
  it('are retried with backoff, each failed attempt recorded, until the period loads', async () => {
    h = await createHarness({ env: { ADOPS_HTTP_ATTEMPTS: '1' } });
    h.emulator.override({ path: '/v2/reports', status: 503, body: '{"message":"down"}', times: 2 });
    await h.worker();
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const { to } = lastDays(1);
    const { pulls } = await enqueueBackfill(h.queues.pulls, zone, to, to);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    expect(result.completed).toHaveLength(1);
    const job = await h.queues.pulls.getJob(pulls[0]!.jobId);
    expect(job?.attemptsMade).toBe(3);
    const { rows } = await h.db.pool.query<{ status: string }>(
      `SELECT status FROM "${TEST_SCHEMA}".report_loads ORDER BY load_id`,
    );
    expect(rows.map((r) => r.status)).toEqual(['failed', 'failed', 'loaded']);
    const status = await collectStatus(warehouseOf(h.db.pool, TEST_SCHEMA), h.jobs, h.queues, 2);
    expect(status.reports.find((r) => r.report === 'daily_zone')?.failed).toEqual([]);
  });
});
