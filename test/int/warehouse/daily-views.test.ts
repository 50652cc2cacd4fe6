// The per-day companions bi_<name>_daily: their rates are ratios of sums, checked against sums
// computed here from the rows loaded, on data where the average of per-row rates differs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJobs, type ReportJob } from '../../../src/platform/config/jobs.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDailyViews, ensureViews } from '../../../src/schema/views.js';
import { dailyViewSql } from '../../../src/schema/views-sql.js';
import { packageRoot } from '../../../src/platform/config/files.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, openTestDatabase, pulled, reportJob, type Row } from './fixtures/reports.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const hourly = loadJobs('jobs').reports.find((r) => r.name === 'hourly') as ReportJob;
const byCampaign = reportJob('wh_hour_campaign', ['day', 'hour', 'campaign_id']);
const noDay = reportJob('wh_no_day', ['campaign_id']);
const weekly: ReportJob = { ...reportJob('wh_weekly', ['campaign_id']), period: 'week' };
const at = new Date(Date.UTC(2026, 3, 10));
let db: TestDatabase;

// Counters: ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions.
// A small hour with a high fill rate beside a big hour with a low one: the mean of the two rates
// (0.9 and 0.1) is 0.5, the day's real fill rate 109 / 1010.
const hourlyRows = (day: string): Row[] => [
  [
    [day, '00'],
    [10, 9, 9, 10, 9],
  ],
  [
    [day, '01'],
    [1000, 100, 100, 1000, 100],
  ],
  [
    [day, '02'],
    [0, 0, 0, 0, 0],
  ],
];
const campaignRows = (day: string): Row[] => [
  [
    [day, '00', '11'],
    [4, 4, 4, 4, 1],
  ],
  [
    [day, '05', '11'],
    [996, 96, 96, 996, 900],
  ],
  [
    [day, '05', '12'],
    [50, 25, 25, 50, 25],
  ],
];

/** Ratio of sums and mean of row rates of counters `num`/`den` over `rows`, computed here. */
function rates(rows: readonly Row[], num: number, den: number): { ratio: number; mean: number } {
  const sum = (k: number) => rows.reduce((s, [, c]) => s + (c[k] as number), 0);
  const perRow = rows.filter(([, c]) => c[den] !== 0).map(([, c]) => (c[num] as number) / (c[den] as number));
  return { ratio: sum(num) / sum(den), mean: perRow.reduce((s, r) => s + r, 0) / perRow.length };
}

async function withClient<T>(fn: (c: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [byCampaign, noDay, weekly]);
  await withClient(async (c) => {
    await ensureViews(c, warehouseOf(db.pool, S), [byCampaign, noDay, weekly]);
    await ensureDailyViews(c, warehouseOf(db.pool, S), [byCampaign, noDay, weekly]);
  });
  for (const day of ['2026-04-01', '2026-04-02']) {
    const period = { start: day, end: day };
    await loadPulledPeriod(db.pool, S, pulled(hourly, period, hourlyRows(day), at));
    await loadPulledPeriod(db.pool, S, pulled(byCampaign, period, campaignRows(day), at));
  }
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(noDay, { start: '2026-04-01', end: '2026-04-01' }, [[['11'], [8, 2, 2, 8, 4]]], at),
  );
});
afterAll(async () => {
  await db?.drop();
});

describe('bi_<name>_daily', () => {
  it('sums a day of bi_hourly and gives its rates as ratios of sums, not the mean of the hours', async () => {
    const { rows } = await db.pool.query(
      `SELECT day::text, ad_requests::int, filled_impressions::int, fill_rate, viewability_rate
         FROM ${S}.bi_hourly_daily ORDER BY day`,
    );
    const fill = rates(hourlyRows('x'), 1, 0);
    const viewability = rates(hourlyRows('x'), 4, 3);
    expect(rows).toHaveLength(2);
    for (const [i, day] of ['2026-04-01', '2026-04-02'].entries()) {
      expect(rows[i]).toMatchObject({ day, ad_requests: 1010, filled_impressions: 109 });
      expect(rows[i].fill_rate).toBeCloseTo(fill.ratio, 12);
      expect(rows[i].viewability_rate).toBeCloseTo(viewability.ratio, 12);
      // The data is such that averaging the hours' rates would be far off.
      expect(Math.abs(rows[i].fill_rate - fill.mean)).toBeGreaterThan(0.3);
      expect(Math.abs(rows[i].viewability_rate - viewability.mean)).toBeGreaterThan(0.3);
    }
    // What a dashboard averaging bi_hourly's rates would have shown instead.
    const avg = await db.pool.query(
      `SELECT avg(fill_rate) AS mean FROM ${S}.bi_hourly WHERE day = '2026-04-01'`,
    );
    expect(avg.rows[0].mean).toBeCloseTo(fill.mean, 12);
  });

  it('keeps the other dimensions of a generated view as groups, with a ratio of sums per campaign', async () => {
    const { rows } = await db.pool.query(
      `SELECT campaign_id::int, ad_requests::int, fill_rate, viewability_rate
         FROM ${S}.bi_wh_hour_campaign_daily WHERE day = '2026-04-02' ORDER BY campaign_id`,
    );
    const c11 = campaignRows('x').filter(([d]) => d[2] === '11');
    const c12 = campaignRows('x').filter(([d]) => d[2] === '12');
    expect(rows.map((r) => [r.campaign_id, r.ad_requests])).toEqual([
      [11, 1000],
      [12, 50],
    ]);
    expect(rows[0].fill_rate).toBeCloseTo(rates(c11, 1, 0).ratio, 12);
    expect(Math.abs(rows[0].fill_rate - rates(c11, 1, 0).mean)).toBeGreaterThan(0.3);
    expect(rows[0].viewability_rate).toBeCloseTo(rates(c11, 4, 3).ratio, 12);
    expect(rows[1].fill_rate).toBeCloseTo(rates(c12, 1, 0).ratio, 12);
  });

  it('takes the day from the period of a daily report without the day dimension', async () => {
    const { rows } = await db.pool.query(
      `SELECT day::text, campaign_id::int, ad_requests::int, fill_rate FROM ${S}.bi_wh_no_day_daily`,
    );
    expect(rows).toEqual([{ day: '2026-04-01', campaign_id: 11, ad_requests: 8, fill_rate: 0.25 }]);
  });

  it('joins dim_date to roll the days up into ISO weeks, still as a ratio of sums', async () => {
    const { rows } = await db.pool.query(
      `SELECT d.iso_year_week, sum(h.filled_impressions)::double precision / NULLIF(sum(h.ad_requests), 0) AS fill_rate
         FROM ${S}.bi_hourly_daily h JOIN ${S}.dim_date d ON d.date = h.day GROUP BY d.iso_year_week`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].iso_year_week).toBe('2026-W14');
    expect(rows[0].fill_rate).toBeCloseTo(rates(hourlyRows('x'), 1, 0).ratio, 12);
  });

  it("adds provisional at the end of an older release's views, replacing them in place (a view over them stays)", async () => {
    // bi_hourly and its companion as the release before provisional made them; a user's view over bi_hourly.
    const file = readFileSync(join(packageRoot(), 'sql', 'views', 'hourly.sql'), 'utf8');
    const old = file.replace(
      /,\n\s*r\.load_id IN \(SELECT load_id FROM report_loads WHERE provisional\) AS provisional/,
      '',
    );
    expect(old).not.toContain('provisional');
    await db.pool.query(`DROP VIEW ${S}.bi_hourly_daily, ${S}.bi_hourly`);
    await withClient(async (c) => {
      await c.query(`SET search_path TO ${S}`);
      await c.query(old);
      const { rows } = await c.query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = 'bi_hourly'::regclass AND attnum > 0 ORDER BY attnum`,
      );
      await c.query(
        dailyViewSql(
          'hourly',
          rows.map((r) => r.name),
          'day',
        ) ?? '',
      );
      await c.query('CREATE VIEW users_hourly AS SELECT day, ad_requests FROM bi_hourly');
      await c.query('RESET search_path');
    });
    await withClient(async (c) => {
      await ensureViews(c, warehouseOf(db.pool, S), [hourly]);
      await ensureDailyViews(c, warehouseOf(db.pool, S), [hourly]);
    });
    for (const view of ['bi_hourly', 'bi_hourly_daily']) {
      const { rows } = await db.pool.query(
        `SELECT count(*)::int AS n, bool_or(provisional) AS any FROM ${S}.${view}`,
      );
      expect(rows).toEqual([{ n: view === 'bi_hourly' ? 6 : 2, any: false }]);
    }
    // Added at the end, so the views were replaced, not dropped: the view over them is still there.
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${S}.users_hourly`)).rows).toEqual([
      { n: 6 },
    ]);
  });

  it('says why a report has no companion: no day in its rows, or the name belongs to another report', async () => {
    const taken = reportJob('wh_pair', ['day']);
    const owner = reportJob('wh_pair_daily', ['day']);
    const outcomes = await withClient((c) =>
      ensureDailyViews(c, warehouseOf(db.pool, S), [weekly, taken, owner]),
    );
    expect(outcomes).toEqual([
      { report: 'wh_weekly', view: 'bi_wh_weekly_daily', status: 'no-day' },
      { report: 'wh_pair', view: 'bi_wh_pair_daily', status: 'name-taken' },
      { report: 'wh_pair_daily', view: 'bi_wh_pair_daily_daily', status: 'no-view' },
    ]);
  });
});
