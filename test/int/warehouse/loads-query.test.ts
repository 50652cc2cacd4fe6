import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPulledPeriod, recordFailedPull } from '../../helpers/load.js';
import { periodRows, restatements } from '../../../src/warehouse/loads-query.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, openTestDatabase, pulled, reportJob, type Row } from './fixtures/reports.js';
import { warehouseOf } from '../../../src/warehouse/pg.js';

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
