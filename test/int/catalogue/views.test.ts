import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJobs, parseJob } from '../../../src/platform/config/jobs.js';
import { ensureReportTables } from '../../../src/schema/report-tables.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { buildCatalogue } from '../../../src/catalogue/rows.js';
import { ensureDailyViews, ensureViews } from '../../../src/schema/views.js';
import { writeCatalogue } from '../../../src/catalogue/sync.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { partitionFor } from '../../helpers/partitions.js';
import { creative, fullCampaign } from '../../unit/catalogue/fixtures.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const jobs = loadJobs('jobs');
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const client = await db.pool.connect();
  try {
    // Idempotent: the template may already hold the report tables.
    await ensureReportTables(client, warehouseOf(db.pool, S), jobs.reports);
  } finally {
    client.release();
  }
});
afterAll(async () => {
  await db.drop();
});

async function withClient<T>(fn: (c: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

describe('ensureViews', () => {
  it('creates a BI view for each default report definition, and again without error', async () => {
    for (let run = 0; run < 2; run++) {
      const outcomes = await withClient((c) => ensureViews(c, warehouseOf(db.pool, S), jobs.reports));
      expect(outcomes.map((o) => [o.report, o.status])).toEqual([
        ['daily_campaign', 'created'],
        ['daily_creative', 'created'],
        ['daily_geo_device', 'created'],
        ['daily_zone', 'created'],
        ['hourly', 'created'],
      ]);
    }
    const { rows } = await db.pool.query(
      `SELECT table_name FROM information_schema.views WHERE table_schema = $1 ORDER BY 1`,
      [S],
    );
    // Each with its per-day companion (ensureDailyViews, run by the template's migrate), and pacing.
    expect(rows.map((r) => r.table_name)).toEqual([
      'bi_campaign_pacing',
      'bi_daily_campaign',
      'bi_daily_campaign_daily',
      'bi_daily_creative',
      'bi_daily_creative_daily',
      'bi_daily_geo_device',
      'bi_daily_geo_device_daily',
      'bi_daily_zone',
      'bi_daily_zone_daily',
      'bi_hourly',
      'bi_hourly_daily',
    ]);
  });

  it('replaces a view whose columns changed, which CREATE OR REPLACE alone refuses, and its companion', async () => {
    await db.pool.query(`DROP VIEW IF EXISTS ${S}.bi_hourly CASCADE`);
    await db.pool.query(`CREATE VIEW ${S}.bi_hourly AS SELECT 1::int AS day, 'x'::text AS old_column`);
    // The per-day companion over the old view would block its DROP.
    await db.pool.query(`CREATE VIEW ${S}.bi_hourly_daily AS SELECT day FROM ${S}.bi_hourly`);
    const outcomes = await withClient((c) => ensureViews(c, warehouseOf(db.pool, S), [{ name: 'hourly' }]));
    expect(outcomes).toContainEqual({ report: 'hourly', status: 'created' });
    const { rows } = await db.pool.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'bi_hourly'
       ORDER BY ordinal_position LIMIT 3`,
      [S],
    );
    expect(rows.map((r) => r.column_name)).toEqual(['account', 'day', 'hour']);
    const daily = await withClient((c) =>
      ensureDailyViews(c, warehouseOf(db.pool, S), [{ name: 'hourly', period: 'day' }]),
    );
    expect(daily).toEqual([{ report: 'hourly', view: 'bi_hourly_daily', status: 'created' }]);
    const companion = await db.pool.query(`SELECT day, fill_rate FROM ${S}.bi_hourly_daily LIMIT 0`);
    expect(companion.fields.map((f) => f.name)).toEqual(['day', 'fill_rate']);
  });

  it('generates a view for a report without a view file, from its table', async () => {
    const custom = parseJob(
      'name: by_campaign_country\ndimensions: [day, campaign_id, country]\nperiod: day\nlookback_days: 1\n',
      'custom.yaml',
    );
    if (custom.kind !== 'report') throw new Error('expected a report job');
    const outcomes = await withClient(async (c) => {
      await ensureReportTables(c, warehouseOf(db.pool, S), [...jobs.reports, custom]);
      return ensureViews(c, warehouseOf(db.pool, S), [...jobs.reports, custom]);
    });
    expect(outcomes).toContainEqual({ report: 'by_campaign_country', status: 'generated' });
    await writeCatalogue(
      warehouseOf(db.pool, S),
      buildCatalogue(
        {
          campaigns: [fullCampaign({ campaign_id: 9, name: 'Nine' })],
          creativesByCampaign: new Map(),
        },
        new ProblemLog(),
      ),
    );
    await partitionFor(db.pool, S, 'report_by_campaign_country', '2026-01-02');
    await db.pool.query(
      `INSERT INTO ${S}.report_by_campaign_country
         (period_start, period_end, day, campaign_id, country, ad_requests, filled_impressions,
          impressions, measurable_impressions, viewable_impressions, load_id)
       VALUES ('2026-01-02', '2026-01-02', '2026-01-02', 9, 'DE', 4, 1, 1, 2, 2, 1)`,
    );
    const { rows } = await db.pool.query(
      `SELECT campaign_name, country, fill_rate, viewability_rate FROM ${S}.bi_by_campaign_country`,
    );
    expect(rows).toEqual([{ campaign_name: 'Nine', country: 'DE', fill_rate: 0.25, viewability_rate: 1 }]);
  });

  it('leaves the caller search_path as it was', async () => {
    await withClient(async (c) => {
      await c.query('SET search_path TO public');
      await ensureViews(c, warehouseOf(db.pool, S), jobs.reports);
      const { rows } = await c.query('SHOW search_path');
      expect(rows[0].search_path).toBe('public');
      await c.query('RESET search_path');
    });
  });

  it('skips a report whose table does not exist', async () => {
    await db.pool.query(`ALTER TABLE ${S}.report_daily_zone RENAME TO zone_backup`);
    try {
      const outcomes = await withClient((c) =>
        ensureViews(c, warehouseOf(db.pool, S), [{ name: 'daily_zone' }]),
      );
      expect(outcomes).toContainEqual({ report: 'daily_zone', status: 'no-table' });
    } finally {
      await db.pool.query(`ALTER TABLE ${S}.zone_backup RENAME TO report_daily_zone`);
    }
  });

  it('skips reports that are not defined, and generates the view of a report whose table lacks the columns its file reads', async () => {
    await db.pool.query(`ALTER TABLE ${S}.report_hourly RENAME COLUMN hour TO hour_of_day`);
    try {
      const outcomes = await withClient((c) =>
        ensureViews(c, warehouseOf(db.pool, S), [{ name: 'hourly' }, { name: 'daily_zone' }]),
      );
      expect(outcomes).toContainEqual({
        report: 'hourly',
        status: 'refused',
        view: 'bi_hourly',
        reads: ['hour'],
        version: 1,
      });
      const cols = await db.pool.query(`SELECT * FROM ${S}.bi_hourly LIMIT 0`);
      expect(cols.fields.map((f) => f.name)).toContain('hour_of_day');
      expect(outcomes).toContainEqual({ report: 'daily_campaign', status: 'no-report' });
      expect(outcomes).toContainEqual({ report: 'daily_zone', status: 'created' });
    } finally {
      await db.pool.query(`ALTER TABLE ${S}.report_hourly RENAME COLUMN hour_of_day TO hour`);
    }
  });

  it('joins report rows to campaign and creative names with fill and viewability rates', async () => {
    await withClient((c) => ensureViews(c, warehouseOf(db.pool, S), jobs.reports));
    await writeCatalogue(
      warehouseOf(db.pool, S),
      buildCatalogue(
        {
          campaigns: [fullCampaign({ campaign_id: 7, name: 'Seven', zone_ids: [3] })],
          creativesByCampaign: new Map([
            [7, [creative({ campaign_id: 7, creative_id: 70, name: 'Banner' })]],
          ]),
        },
        new ProblemLog(),
      ),
    );
    const load = await db.pool.query(
      `INSERT INTO ${S}.report_loads (report, period_start, period_end, dimensions, status, http_attempts)
       VALUES ('daily_creative', '2026-01-01', '2026-01-01', '{day,campaign_id,creative_id}', 'loaded', 1)
       RETURNING load_id`,
    );
    const loadId = load.rows[0].load_id;
    await partitionFor(db.pool, S, 'report_daily_creative', '2026-01-01');
    await partitionFor(db.pool, S, 'report_daily_zone', '2026-01-01');
    await db.pool.query(
      `INSERT INTO ${S}.report_daily_creative
         (period_start, period_end, day, campaign_id, creative_id, ad_requests, filled_impressions,
          impressions, measurable_impressions, viewable_impressions, load_id)
       VALUES ('2026-01-01', '2026-01-01', '2026-01-01', 7, 70, 200, 150, 140, 100, 40, $1),
              ('2026-01-01', '2026-01-01', '2026-01-01', 8, 80, 0, 0, 0, 0, 0, $1)`,
      [loadId],
    );
    await db.pool.query(
      `INSERT INTO ${S}.report_daily_zone
         (period_start, period_end, day, zone_id, ad_requests, filled_impressions,
          impressions, measurable_impressions, viewable_impressions, load_id)
       VALUES ('2026-01-01', '2026-01-01', '2026-01-01', 3, 10, 5, 5, 4, 1, $1)`,
      [loadId],
    );
    const { rows } = await db.pool.query(
      `SELECT campaign_id::int, campaign_name, creative_id::int, creative_name, ad_type, fill_rate, viewability_rate
         FROM ${S}.bi_daily_creative ORDER BY campaign_id`,
    );
    expect(rows).toEqual([
      {
        campaign_id: 7,
        campaign_name: 'Seven',
        creative_id: 70,
        creative_name: 'Banner',
        ad_type: 'video',
        fill_rate: 0.75,
        viewability_rate: 0.4,
      },
      // Unknown entities keep their facts; rates over zero denominators are NULL, not an error.
      {
        campaign_id: 8,
        campaign_name: null,
        creative_id: 80,
        creative_name: null,
        ad_type: null,
        fill_rate: null,
        viewability_rate: null,
      },
    ]);
    const zone = await db.pool.query(`SELECT campaigns_assigned::int, fill_rate FROM ${S}.bi_daily_zone`);
    expect(zone.rows).toEqual([{ campaigns_assigned: 1, fill_rate: 0.5 }]);
  });
});
