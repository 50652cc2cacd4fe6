import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPulledPeriod, recordFailedPull } from '../../helpers/pipeline.js';
import { periodRows, restatements } from '../../../src/pull/history.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, openTestDatabase, pulled, reportJob, type Row } from './fixtures/reports.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { runCli } from '../../helpers/run-cli.js';

const S = TEST_SCHEMA;
const report = reportJob('wh_status', ['day', 'campaign_id']);
const day = (d: string) => ({ start: d, end: d });
const row = (d: string, n: number): Row => [
  [d, '1'],
  [n, n, n, n, n],
];
let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  // 06-01: loaded, then re-pulled 2 days after its end with +10%; 06-02: loaded then a failed re-pull;
  // 06-03: only failed; 06-04: loaded, then a stale load superseded.
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(report, day('2026-06-01'), [row('2026-06-01', 100)], new Date('2026-06-02T03:00:00Z')),
  );
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(report, day('2026-06-01'), [row('2026-06-01', 110)], new Date('2026-06-03T03:00:00Z')),
  );
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(report, day('2026-06-02'), [row('2026-06-02', 5)], new Date('2026-06-03T03:00:00Z')),
  );
  await recordFailedPull(db.pool, S, {
    report,
    period: day('2026-06-02'),
    error: new Error('HTTP 503'),
    attempts: 5,
  });
  await recordFailedPull(db.pool, S, {
    report,
    period: day('2026-06-03'),
    error: new Error('HTTP 500'),
    attempts: 5,
  });
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(report, day('2026-06-04'), [row('2026-06-04', 1)], new Date('2026-06-05T03:00:00Z')),
  );
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(report, day('2026-06-04'), [row('2026-06-04', 2)], new Date('2026-06-04T03:00:00Z')),
  );
});
afterAll(async () => {
  await db?.drop();
});

describe('periodRows', () => {
  it("gives each attempted period's latest status, when its rows were loaded, how many, and the error", async () => {
    const states = await periodRows(warehouseOf(db.pool, S), report.name, '2026-06-01', '2026-06-30');
    expect(states.map((s) => [s.period_start, s.period_end, s.last_status, s.rows, s.error])).toEqual([
      ['2026-06-01', '2026-06-01', 'loaded', 1, null],
      ['2026-06-02', '2026-06-02', 'failed', 1, 'Error: HTTP 503'],
      ['2026-06-03', '2026-06-03', 'failed', null, 'Error: HTTP 500'],
      ['2026-06-04', '2026-06-04', 'superseded', 1, null],
    ]);
    expect(states[0]!.last_loaded_at).toBeInstanceOf(Date);
    expect(states[2]!.last_loaded_at).toBeNull();
  });

  it('limits to periods overlapping the range and to the report', async () => {
    expect(
      (await periodRows(warehouseOf(db.pool, S), report.name, '2026-06-02', '2026-06-03')).map(
        (s) => s.period_start,
      ),
    ).toEqual(['2026-06-02', '2026-06-03']);
    expect(await periodRows(warehouseOf(db.pool, S), 'other', '2026-06-01', '2026-06-30')).toEqual([]);
  });
});

describe('restatements', () => {
  it('summarizes how much reloads changed the totals, by the age of the period', async () => {
    const summary = await restatements(warehouseOf(db.pool, S), report.name);
    expect(summary).toEqual([
      {
        report: report.name,
        age_days: 2,
        loads: 1,
        restated: 1,
        avg_abs_change: {
          ad_requests: 10,
          filled_impressions: 10,
          impressions: 10,
          measurable_impressions: 10,
          viewable_impressions: 10,
        },
        max_rel_change: 0.1,
      },
    ]);
    expect(await restatements(warehouseOf(db.pool, S), 'other')).toEqual([]);
  });
});

describe('adops loads', () => {
  const env = () => ({ DATABASE_URL: db.url, ADOPS_SCHEMA: S, LOG_LEVEL: 'warn' });
  const ids = async (where: string) =>
    (
      await db.pool.query<{ id: string }>(
        `SELECT load_id::text AS id FROM "${S}".report_loads WHERE report = $1 AND ${where} ORDER BY load_id DESC`,
        [report.name],
      )
    ).rows.map((r) => r.id);

  it('lists recent loads newest first with id, report, account, period, status, rows, the failed step and error: no SQL to find a load id', async () => {
    const run = await runCli(['loads', '--report', report.name], env());
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^id +report +account +period +status +rows +request +step +error/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(await ids('true'));
    const failed = lines.find((l) => l.includes('2026-06-03'));
    expect(failed).toMatch(/^\d+ +wh_status +default +2026-06-03 +failed +- +- +fetch +Error: HTTP 500$/);
    // The fixture's loads of 06-01 and 06-02 share a fetch token: they read as one request.
    expect(lines.find((l) => / 2026-06-01 +loaded/.test(l))).toMatch(
      / loaded +1 +2026-06-01\.\.2026-06-02 \(2\) *$/,
    );
  });

  it('--failed shows only failed attempts; --account and --report narrow; --json gives every field for scripts', async () => {
    const failed = await runCli(['loads', '--failed'], env());
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stdout.trim().split('\n').slice(1)).toHaveLength(2);
    expect(failed.stdout).not.toMatch(/ loaded /);
    const json = await runCli(['loads', '--json', '--limit', '2', '--report', report.name], env());
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => String(r.load_id))).toEqual((await ids('true')).slice(0, 2));
    expect(Object.keys(rows[0] ?? {})).toEqual(
      expect.arrayContaining([
        'load_id',
        'report',
        'account',
        'period_start',
        'period_end',
        'status',
        'rows',
        'failed_step',
        'error',
      ]),
    );
    const none = await runCli(['loads', '--account', 'north'], env());
    expect([none.code, none.stdout]).toEqual([0, 'no loads recorded (account north)\n']);
  });

  it('refuses a bad --limit or --account as bad usage, exit 2', async () => {
    expect((await runCli(['loads', '--limit', '0'], env())).code).toBe(2);
    const bad = await runCli(['loads', '--account', 'North!'], env());
    expect(bad.code).toBe(2);
  });
});
