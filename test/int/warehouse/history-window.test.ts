// The window-bounded reads of report_loads (status, heal, the tick's gap query) and the indexed
// latest re-pull answer exactly what the plain, unbounded queries answer, over years of day, week
// and month periods with re-pulls, failures and months that start up to 30 days before a window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';
import { LONGEST_PERIOD_DAYS, periodsBetween, type PeriodUnit } from '../../../src/platform/dates/periods.js';
import { unreconciledPeriods } from '../../../src/pull/history.js';
import { lastRestatements, periodRows } from '../../../src/pull/history.js';
import { maxRelativeChange, type Restatement } from '../../../src/pull/history.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const FIRST = '2023-11-20';
const LAST = '2026-03-10';
const REPORTS: ReadonlyArray<{ name: string; unit: PeriodUnit }> = [
  { name: 'hist_day', unit: 'day' },
  { name: 'hist_week', unit: 'week' },
  { name: 'hist_month', unit: 'month' },
];

let db: TestDatabase;

/**
 * Seeds every period of FIRST..LAST of each report with 1 to 3 attempts: the last one fails for
 * some periods, is superseded for others, some loads do not reconcile, and a few periods have no
 * attempt at all. Every loaded attempt but a period's first carries a restatement; hist_month is
 * never re-pulled, so lastRestatements must find nothing for it.
 */
async function seed(): Promise<void> {
  const periods = REPORTS.flatMap((r) =>
    periodsBetween(FIRST, LAST, r.unit).map((p, i) => ({ report: r.name, ...p, i })),
  );
  await db.pool.query(
    `WITH p AS (
       SELECT * FROM unnest($1::text[], $2::date[], $3::date[], $4::int[]) AS p(report, s, e, i)
        WHERE i % 23 <> 5),
     attempts AS (
       SELECT p.*, k, 1 + (i % 3) AS n FROM p, generate_series(1, 1 + (i % 3)) AS k
        WHERE NOT (report = 'hist_month' AND k > 1))
     INSERT INTO ${S}.report_loads (report, period_start, period_end, dimensions, status, rows,
                                    reconciled, restatement, http_attempts, fetched_at, recorded_at, error)
     SELECT report, s, e, '{day}',
            CASE WHEN k = n AND i % 7 = 3 AND n > 1 THEN 'failed'
                 WHEN k = n AND i % 11 = 4 THEN 'superseded' ELSE 'loaded' END,
            CASE WHEN k = n AND i % 7 = 3 AND n > 1 THEN NULL ELSE i * 10 + k END,
            i % 5 <> 2,
            CASE WHEN k > 1 THEN (
              SELECT jsonb_object_agg(c, jsonb_build_object(
                       'previous', CASE WHEN c = 'ad_requests' AND i % 23 = 7 THEN NULL
                                        WHEN i % 17 = 0 THEN 0 ELSE 100 + i % 7 END,
                       'delta', CASE WHEN c = 'impressions' AND i % 19 = 0 THEN NULL ELSE k * i % 13 - 4 END))
                FROM unnest($5::text[]) AS c) END,
            1, e + k, e + k,
            CASE WHEN k = n AND i % 7 = 3 AND n > 1 THEN 'HTTP 503 for ' || s END
       FROM attempts ORDER BY e, k, report`,
    [
      periods.map((p) => p.report),
      periods.map((p) => p.start),
      periods.map((p) => p.end),
      periods.map((p) => p.i),
      [...COUNTERS],
    ],
  );
  await db.pool.query(
    `INSERT INTO ${S}.report_totals (report, period_start, period_end, ad_requests, filled_impressions,
                                     impressions, measurable_impressions, viewable_impressions, load_id, loaded_at)
     SELECT DISTINCT ON (report, period_start, period_end) report, period_start, period_end, 1, 1, 1, 1, 1,
            load_id, recorded_at
       FROM ${S}.report_loads WHERE status = 'loaded'
      ORDER BY report, period_start, period_end, load_id DESC`,
  );
  await db.pool.query(`ANALYZE ${S}.report_loads`);
}

/** periodRows as it was written before the window's lower bound: the reference answer. */
async function referenceStates(report: string, from: string, to: string): Promise<unknown[]> {
  const { rows } = await db.pool.query(
    `WITH last AS (
       SELECT DISTINCT ON (period_start, period_end) period_start, period_end, status, error
         FROM ${S}.report_loads
        WHERE report = $1 AND period_start <= $3::date AND period_end >= $2::date
        ORDER BY period_start, period_end, load_id DESC)
     SELECT last.period_start::text AS period_start, last.period_end::text AS period_end,
            last.status AS last_status, t.loaded_at AS last_loaded_at, l.rows,
            CASE WHEN last.status = 'failed' THEN last.error END AS error, coalesce(l.provisional, false) AS provisional
       FROM last
       LEFT JOIN ${S}.report_totals t
              ON t.report = $1 AND t.period_start = last.period_start AND t.period_end = last.period_end
       LEFT JOIN ${S}.report_loads l ON l.load_id = t.load_id
      ORDER BY last.period_start, last.period_end`,
    [report, from, to],
  );
  return rows;
}

async function referenceUnreconciled(report: string, from: string, to: string): Promise<unknown[]> {
  const { rows } = await db.pool.query(
    `SELECT t.period_start::text AS start, t.period_end::text AS "end", l.unreconciled_reason AS reason, l.mismatch
       FROM ${S}.report_totals t JOIN ${S}.report_loads l ON l.load_id = t.load_id
      WHERE t.report = $1 AND t.period_start <= $3::date AND t.period_end >= $2::date AND l.reconciled = false
      ORDER BY t.period_start`,
    [report, from, to],
  );
  return rows;
}

/** Windows that start on, just after and up to a month after a period's start, short and long. */
const WINDOWS: ReadonlyArray<[string, string]> = [
  ['2024-01-01', '2024-01-31'],
  ['2024-01-31', '2024-02-29'],
  ['2024-03-30', '2024-04-02'],
  ['2024-12-31', '2025-01-30'],
  ['2025-02-28', '2025-02-28'],
  ['2025-06-15', '2025-09-14'],
  ['2026-02-10', '2026-03-11'],
  ['2023-11-01', '2023-12-31'],
  [FIRST, LAST],
];

beforeAll(async () => {
  db = await createTestDatabase();
  await seed();
});
afterAll(async () => {
  await db?.drop();
});

describe('window-bounded reads of a long history', () => {
  it('the seed has the cases the bound could get wrong: months over the window edge, failures, gaps', async () => {
    const { rows } = await db.pool.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM ${S}.report_loads GROUP BY status ORDER BY status`,
    );
    expect(rows.map((r) => r.status)).toEqual(['failed', 'loaded', 'superseded']);
    const months = await periodRows(warehouseOf(db.pool, S), 'hist_month', '2024-01-31', '2024-01-31');
    expect(months.map((m) => m.period_start)).toEqual(['2024-01-01']);
    expect(LONGEST_PERIOD_DAYS).toBe(31);
  });

  it('periodRows gives the reference answer for every report and window', async () => {
    for (const r of REPORTS)
      for (const [from, to] of WINDOWS) {
        const ours = await periodRows(warehouseOf(db.pool, S), r.name, from, to);
        expect(ours, `${r.name} ${from}..${to}`).toEqual(await referenceStates(r.name, from, to));
      }
  });

  it('unreconciledPeriods gives the reference answer for every report and window', async () => {
    for (const r of REPORTS)
      for (const [from, to] of WINDOWS) {
        const ours = await unreconciledPeriods(warehouseOf(db.pool, S), { name: r.name }, from, to);
        expect(ours, `${r.name} ${from}..${to}`).toEqual(await referenceUnreconciled(r.name, from, to));
      }
  });

  it('a window starting on each day of a month finds the month that overlaps it', async () => {
    for (let d = '2025-03-01'; d <= '2025-03-31'; d = addDays(d, 1)) {
      const ours = await periodRows(warehouseOf(db.pool, S), 'hist_month', d, d);
      expect(ours, d).toEqual(await referenceStates('hist_month', d, d));
      expect(ours.map((s) => s.period_start)).toEqual(['2025-03-01']);
    }
  });

  it("lastRestatements gives each report's latest loaded re-pull, and nothing for a report never re-pulled", async () => {
    const { rows } = await db.pool.query<{ report: string; restatement: Restatement }>(
      `SELECT DISTINCT ON (report) report, restatement FROM ${S}.report_loads
        WHERE status = 'loaded' AND restatement IS NOT NULL ORDER BY report, load_id DESC`,
    );
    const expected = new Map(rows.map((r) => [r.report, maxRelativeChange(r.restatement)]));
    expect([...expected.keys()].sort()).toEqual(['hist_day', 'hist_week']);
    const ours = await lastRestatements(warehouseOf(db.pool, S), [...REPORTS.map((r) => r.name), 'absent']);
    expect(ours).toEqual(expected);
  });
});
