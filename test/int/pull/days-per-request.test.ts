// Many days in one request (issue 37): a backfill of consecutive days asks the API once per
// days_per_request days, routes the rows to their periods by day, and loads each period on its own;
// a server that refuses a long range gets shorter requests. Real Postgres, queue and emulator.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNT } from '../../../src/platform/config/accounts.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { PULL_JOB, pullData } from '../../../src/platform/queue/jobs.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { ReportBody } from '../../../src/api/body.js';
import { loadStates } from '../../../src/pull/history.js';
import { takeFetchToken } from '../../../src/pull/load.js';
import { loadFetched } from '../../../src/pull/run.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { runTick } from '../../../src/schedule/scheduler.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { capturedLogger, createHarness, snapshot, type Harness } from '../../helpers/pipeline.js';
import { runCli } from '../../helpers/run-cli.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const h = await createHarness({ env });
  harnesses.push(h);
  return h;
}

const FROM = '2026-01-01';
const requests = (h: Harness) => h.emulator.stats().requests['GET /v2/reports'] ?? 0;
const only = (h: Harness, name: string) => h.jobs.reports.filter((r) => r.name === name);
const query = async <R extends object>(h: Harness, sql: string, values: unknown[] = []) =>
  (await h.db.pool.query<R>(sql.replaceAll('$S', `"${TEST_SCHEMA}"`), values)).rows;

/** Backfills `report` over from..to through `adops backfill --wait` and a worker of the harness. */
async function backfill(h: Harness, report: string, from: string, to: string) {
  const run = await runCli(['backfill', '--report', report, '--from', from, '--to', to, '--wait'], h.env);
  expect(run.code, run.stderr + run.stdout).toBe(0);
  return run;
}

/** A report body of [day, campaign_id] with the given leaves, and totals (their sums unless given). */
function body(leaves: Record<string, Record<string, number>>, totals?: number): string {
  const items: Record<string, Record<string, Record<string, number>>> = {};
  let sum = 0;
  for (const [day, campaigns] of Object.entries(leaves)) {
    items[day] = {};
    for (const [campaign, n] of Object.entries(campaigns)) {
      sum += n;
      items[day][campaign] = Object.fromEntries(COUNTERS.map((c) => [c, n]));
    }
  }
  return JSON.stringify({ items, totals: Object.fromEntries(COUNTERS.map((c) => [c, totals ?? sum])) });
}

describe('days_per_request', () => {
  it('a 28-day backfill of daily_campaign makes 4 report requests and loads what one request per day loads', async () => {
    const [grouped, single] = [await harness(), await harness({ ADOPS_DAYS_PER_REQUEST: '1' })];
    const to = addDays(FROM, 27);
    for (const h of [grouped, single]) {
      await h.worker();
      await backfill(h, 'daily_campaign', FROM, to);
    }
    expect(requests(grouped)).toBe(4);
    expect(requests(single)).toBe(28);
    // Row for row, and every period's totals (the API's for one day, the rows' sums for seven).
    expect(await snapshot(grouped.db.pool, grouped.jobs)).toEqual(
      await snapshot(single.db.pool, single.jobs),
    );
    // Each period is its own load, with its own record; the totals say where they came from.
    const loads = await query<{ n: number; tokens: number; sources: string[] }>(
      grouped,
      `SELECT count(*)::int AS n, count(DISTINCT l.fetch_token)::int AS tokens, array_agg(DISTINCT t.totals_source) AS sources
         FROM $S.report_loads l JOIN $S.report_totals t ON t.load_id = l.load_id WHERE l.status = 'loaded'`,
    );
    expect(loads).toEqual([{ n: 28, tokens: 4, sources: ['rows'] }]);
    const [{ sources = [] } = {}] = await query<{ sources: string[] }>(
      single,
      'SELECT array_agg(DISTINCT totals_source) AS sources FROM $S.report_totals',
    );
    expect(sources).toEqual(['api']);
    // adops loads shows which periods came in one request.
    const listed = await runCli(['loads', '--report', 'daily_campaign', '--limit', '28'], grouped.env);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/\brequest\b/);
    expect(listed.stdout).toContain(`${addDays(FROM, 21)}..${to} (7)`);
    const status = await runCli(['status', '--json', '--days', '60'], grouped.env);
    expect(status.code).toBe(0);
  });

  it('against a server that takes at most 3 days, splits the requests, loads every period exactly, and starts the next requests at 3 days', async () => {
    const h = await harness({ LOG_LEVEL: 'info' });
    h.emulator.setQuirks({ maxDaysPerRequest: 3 });
    const { logger, lines } = capturedLogger(h.config);
    await h.worker({ logger });
    const to = addDays(FROM, 13);
    await backfill(h, 'daily_campaign', FROM, to);
    const splits = lines
      .filter((l) => l.includes('split in two'))
      .map((l) => JSON.parse(l) as { into: number[] });
    // Two 7-day requests, each refused, split 4 + 3, the 4 refused again and split 2 + 2 (unless the
    // other job had already learnt 3): every split is logged with its halves.
    expect(splits.length).toBeGreaterThanOrEqual(2);
    expect(splits[0]?.into).toEqual([4, 3]);
    const failed = await query(h, "SELECT 1 FROM $S.report_loads WHERE status = 'failed'");
    expect(failed).toEqual([]);
    // Each period's totals are the API's totals of that day alone, and its rows add up to them.
    const days = await query<{ day: string; totals: number; rows: string }>(
      h,
      `SELECT t.period_start::text AS day, t.impressions::int AS totals,
              (SELECT sum(impressions) FROM $S.report_daily_campaign r WHERE r.period_start = t.period_start)::text AS rows
         FROM $S.report_totals t ORDER BY 1`,
    );
    expect(days).toHaveLength(14);
    for (const d of days) {
      const res = await fetch(
        `${h.emulator.url}/reports?date_from=${d.day}&date_until=${d.day}&dimensions=day&dimensions=campaign_id`,
        { headers: { authorization: 'Bearer demo-key' } },
      );
      const api = (await res.json()) as { totals: { impressions: number } };
      expect([d.day, d.totals, Number(d.rows)]).toEqual([
        d.day,
        api.totals.impressions,
        api.totals.impressions,
      ]);
    }
    // The worker remembers: 7 more days go as 3 + 3 + 1, with no refusal.
    h.emulator.resetStats();
    const before = lines.length;
    await backfill(h, 'daily_campaign', addDays(to, 1), addDays(to, 7));
    expect(requests(h)).toBe(3);
    expect(lines.slice(before).filter((l) => l.includes('split in two'))).toEqual([]);
    const pulled = lines.slice(before).find((l) => l.includes('"msg":"pull loaded"'));
    expect(JSON.parse(pulled ?? '{}')).toMatchObject({ periods: 7, requests: 3, splits: 0 });
  });

  it('a 400 a shorter request cannot mend (an unknown dimension, a key refused) is not split', async () => {
    const h = await harness();
    const { logger, lines } = capturedLogger(h.config);
    await h.worker({ logger });
    h.emulator.override({
      path: '/v2/reports',
      status: 400,
      body: JSON.stringify({
        ...{ status: 400, error: 'bad_request' },
        ...{ message: 'Unknown dimension "campaign_id".', field: 'dimensions' },
      }),
      times: 1,
    });
    const pulls = await enqueueBackfill(h.queues.pulls, only(h, 'daily_campaign'), FROM, addDays(FROM, 6));
    const result = await waitForPulls(h.queues.pulls, pulls.pulls);
    expect(result.failed).toHaveLength(1);
    expect(requests(h)).toBe(1);
    expect(lines.filter((l) => l.includes('split in two'))).toEqual([]);
    // Every period of the request is recorded failed, once.
    const failed = await query<{ n: number }>(
      h,
      "SELECT count(*)::int AS n FROM $S.report_loads WHERE status = 'failed'",
    );
    expect(failed).toEqual([{ n: 7 }]);
  });

  it('reconciles the request as a whole: a mismatch leaves every period of it unreconciled', async () => {
    const h = await harness();
    await h.worker();
    const leaves = { '2026-01-01': { 5: 10 }, '2026-01-02': { 5: 20, 6: 1 }, '2026-01-03': { 6: 3 } };
    h.emulator.override({ path: '/v2/reports', status: 200, body: body(leaves, 999) });
    const pulls = await enqueueBackfill(h.queues.pulls, only(h, 'daily_campaign'), FROM, '2026-01-03');
    expect((await waitForPulls(h.queues.pulls, pulls.pulls)).failed).toEqual([]);
    const loads = await query<{ day: string; reconciled: boolean; reason: string; rows: number }>(
      h,
      `SELECT period_start::text AS day, reconciled, unreconciled_reason AS reason, rows FROM $S.report_loads ORDER BY 1`,
    );
    expect(loads).toEqual([
      { day: '2026-01-01', reconciled: false, reason: 'mismatch', rows: 1 },
      { day: '2026-01-02', reconciled: false, reason: 'mismatch', rows: 2 },
      { day: '2026-01-03', reconciled: false, reason: 'mismatch', rows: 1 },
    ]);
  });

  it('loads a day of the range with no rows as an empty period, and records each period its own totals from its rows', async () => {
    const h = await harness();
    await h.worker();
    const leaves = { '2026-01-01': { 5: 10 }, '2026-01-03': { 5: 20, 6: 1 } };
    h.emulator.override({ path: '/v2/reports', status: 200, body: body(leaves) });
    const pulls = await enqueueBackfill(h.queues.pulls, only(h, 'daily_campaign'), FROM, '2026-01-03');
    expect((await waitForPulls(h.queues.pulls, pulls.pulls)).failed).toEqual([]);
    const totals = await query<{
      day: string;
      impressions: string;
      source: string;
      rows: number;
      reconciled: boolean;
    }>(
      h,
      `SELECT t.period_start::text AS day, t.impressions::text, t.totals_source AS source, l.rows, l.reconciled
         FROM $S.report_totals t JOIN $S.report_loads l ON l.load_id = t.load_id ORDER BY 1`,
    );
    expect(totals).toEqual([
      { day: '2026-01-01', impressions: '10', source: 'rows', rows: 1, reconciled: true },
      { day: '2026-01-02', impressions: '0', source: 'rows', rows: 0, reconciled: true },
      { day: '2026-01-03', impressions: '21', source: 'rows', rows: 2, reconciled: true },
    ]);
  });

  it.each(['binary', 'text'] as const)(
    "loads the periods of a streamed request by one COPY (%s), each row under its period and its period's load",
    async (copyFormat) => {
      const h = await harness();
      const wh = warehouseOf(h.db.pool, TEST_SCHEMA, { copyFormat });
      const [report] = only(h, 'daily_campaign');
      const periods = ['2026-01-01', '2026-01-02', '2026-01-03'].map((d) => ({ start: d, end: d }));
      const text = body({ '2026-01-01': { 5: 10, 6: 1 }, '2026-01-03': { 5: 20 } });
      async function* chunks() {
        for (let i = 0; i < text.length; i += 16) yield Buffer.from(text.slice(i, i + 16));
      }
      const info = {
        ...{ account: DEFAULT_ACCOUNT, report: report!, period: { start: FROM, end: '2026-01-03' }, periods },
        ...{ fetchToken: await takeFetchToken(wh), attempts: 1 },
      };
      const loaded = await loadFetched(wh, info, new ReportBody(chunks(), []), { inlineMaxRows: 0 });
      expect(loaded.periods.map((p) => [p.period.start, p.status, p.rows])).toEqual([
        [FROM, 'loaded', 2],
        ['2026-01-02', 'loaded', 0],
        ['2026-01-03', 'loaded', 1],
      ]);
      const rows = await query<{ day: string; start: string; impressions: string; same: boolean }>(
        h,
        `SELECT r.day::text, r.period_start::text AS start, r.impressions::text,
                l.period_start = r.period_start AND l.status = 'loaded' AS same
           FROM $S.report_daily_campaign r JOIN $S.report_loads l ON l.load_id = r.load_id ORDER BY 1, 3`,
      );
      expect(rows).toEqual([
        { day: FROM, start: FROM, impressions: '1', same: true },
        { day: FROM, start: FROM, impressions: '10', same: true },
        { day: '2026-01-03', start: '2026-01-03', impressions: '20', same: true },
      ]);
    },
  );

  it('fences each period of a request by its fetch token: a period a later fetch loaded stays, the others load', async () => {
    const h = await harness();
    const wh = warehouseOf(h.db.pool, TEST_SCHEMA);
    const [report] = only(h, 'daily_campaign');
    const [older, newer] = [await takeFetchToken(wh), await takeFetchToken(wh)];
    const info = (period: { start: string; end: string }, fetchToken: number, periods?: typeof days) => ({
      ...{ account: DEFAULT_ACCOUNT, report: report!, period, fetchToken, attempts: 1 },
      ...(periods === undefined ? {} : { periods }),
    });
    const days = ['2026-01-01', '2026-01-02', '2026-01-03'].map((d) => ({ start: d, end: d }));
    const second = { start: '2026-01-02', end: '2026-01-02' };
    await loadFetched(
      wh,
      info(second, newer),
      new ReportBody(Buffer.from(body({ '2026-01-02': { 7: 5 } })), []),
    );
    const all = body({ '2026-01-01': { 5: 1 }, '2026-01-02': { 5: 2 }, '2026-01-03': { 5: 3 } });
    const range = { start: FROM, end: '2026-01-03' };
    const loaded = await loadFetched(wh, info(range, older, days), new ReportBody(Buffer.from(all), []));
    expect(loaded.periods.map((p) => [p.period.start, p.status])).toEqual([
      [FROM, 'loaded'],
      ['2026-01-02', 'superseded'],
      ['2026-01-03', 'loaded'],
    ]);
    const rows = await query(
      h,
      'SELECT day::text, campaign_id::int AS campaign, impressions::int FROM $S.report_daily_campaign ORDER BY 1',
    );
    expect(rows).toEqual([
      { day: FROM, campaign: 5, impressions: 1 },
      { day: '2026-01-02', campaign: 7, impressions: 5 },
      { day: '2026-01-03', campaign: 5, impressions: 3 },
    ]);
  });

  it('refuses a body with a day outside the requested range, loading none of its periods', async () => {
    const h = await harness();
    await h.worker();
    h.emulator.override({
      path: '/v2/reports',
      status: 200,
      body: body({ '2026-01-01': { 5: 1 }, '2026-01-09': { 5: 2 } }),
      times: 20,
    });
    const pulls = await enqueueBackfill(h.queues.pulls, only(h, 'daily_campaign'), FROM, '2026-01-03');
    const result = await waitForPulls(h.queues.pulls, pulls.pulls);
    expect(result.failed[0]?.reason).toMatch(/2026-01-09.*outside the range 2026-01-01\.\.2026-01-03/);
    const loads = await query<{ status: string; step: string }>(
      h,
      'SELECT DISTINCT status, failed_step AS step FROM $S.report_loads',
    );
    expect(loads).toEqual([{ status: 'failed', step: 'parse' }]);
    expect(await query(h, 'SELECT 1 FROM $S.report_daily_campaign')).toEqual([]);
  });

  it('replays one period of a request from its archived body, leaving the others as they are', async () => {
    const h = await harness();
    await h.worker();
    await backfill(h, 'daily_campaign', FROM, '2026-01-07');
    const [target] = await query<{ id: string }>(
      h,
      "SELECT load_id::text AS id FROM $S.report_loads WHERE period_start = '2026-01-04'",
    );
    const before = await snapshot(h.db.pool, h.jobs);
    const replay = await runCli(['replay', '--load-id', target?.id ?? ''], h.env);
    expect(replay.code, replay.stderr).toBe(0);
    expect(await snapshot(h.db.pool, h.jobs)).toEqual(before);
    const replays = await query<{ day: string; of: string }>(
      h,
      'SELECT period_start::text AS day, replay_of::text AS of FROM $S.report_loads WHERE replay_of IS NOT NULL',
    );
    expect(replays).toEqual([{ day: '2026-01-04', of: target?.id }]);
  });

  it('still runs a pull of the 1.0 shape (one period, no range) left in the queue by an upgrade', async () => {
    const h = await harness();
    await h.worker();
    const legacy = { report: 'daily_campaign', periodStart: FROM, periodEnd: FROM };
    const fresh = pullData(
      'daily_campaign',
      { start: '2026-01-02', end: '2026-01-02' },
      undefined,
      DEFAULT_ACCOUNT,
    );
    const jobs = [
      await h.queues.pulls.add(PULL_JOB, legacy, { jobId: 'legacy-1' }),
      await h.queues.pulls.add(PULL_JOB, fresh, { jobId: 'one-period-2' }),
    ];
    const result = await waitForPulls(
      h.queues.pulls,
      jobs.map((j) => ({ data: j.data, jobId: j.id ?? '', added: true })),
    );
    expect(result.failed).toEqual([]);
    expect(requests(h)).toBe(2);
    const loaded = await query(
      h,
      "SELECT period_start::text AS day FROM $S.report_loads WHERE status = 'loaded' ORDER BY 1",
    );
    expect(loaded).toEqual([{ day: FROM }, { day: '2026-01-02' }]);
  });

  it('a nightly tick with a 3-day lookback makes one request per report', async () => {
    const h = await harness();
    await h.worker();
    const wh = warehouseOf(h.db.pool, TEST_SCHEMA);
    const today = new Date().toISOString().slice(0, 10);
    const at = Date.parse(`${today}T03:00:00Z`);
    for (const report of h.jobs.reports) {
      const result = await runTick(
        {
          reports: new Map([[report.name, report]]),
          pulls: h.queues.pulls,
          states: (r, from, to, account) => loadStates(wh, r, from, to, account),
          accounts: h.config.accounts,
          healDays: 30,
          gapCap: 0,
        },
        { id: `repeat:t:${at}`, data: { report: report.name }, timestamp: at, opts: { prevMillis: at } },
      );
      expect([report.lookbackDays, result.window.length, result.added]).toEqual([3, 4, 1]);
    }
    const jobs = await h.queues.pulls.getJobs(['waiting', 'active', 'completed', 'delayed']);
    const done = await waitForPulls(
      h.queues.pulls,
      jobs.map((j) => ({ data: j.data, jobId: j.id ?? '', added: true })),
    );
    expect(done.failed).toEqual([]);
    expect(requests(h)).toBe(h.jobs.reports.length);
    const periods = await query<{ n: number }>(
      h,
      "SELECT count(*)::int AS n FROM $S.report_loads WHERE status = 'loaded'",
    );
    expect(periods).toEqual([{ n: 4 * h.jobs.reports.length }]);
  });
});
