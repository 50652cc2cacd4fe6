import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureReportTables } from '../../../src/schema/report-tables.js';
import { SchemaRefusal } from '../../../src/schema/versions.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { partitionFor } from '../../helpers/partitions.js';
import { openTestDatabase, reportJob } from './fixtures/reports.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function ensure(reports: Parameters<typeof ensureReportTables>[2]) {
  const client = await db.pool.connect();
  try {
    return await ensureReportTables(client, warehouseOf(db.pool, S), reports);
  } finally {
    client.release();
  }
}

async function columns(table: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ c: string }>(
    `SELECT column_name || ' ' || data_type || CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END AS c
       FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
    [S, table],
  );
  return rows.map((r) => r.c);
}

describe('ensureReportTables', () => {
  it('the migrated template already has the tables of jobs/*.yaml', async () => {
    const { rows } = await db.pool.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'report%' ORDER BY 1`,
      [S],
    );
    expect(rows.map((r) => r.t)).toEqual(
      expect.arrayContaining([
        'report_daily_campaign',
        'report_hourly',
        'report_loads',
        'report_raw',
        'report_totals',
      ]),
    );
  });

  it('creates a table typed per dimension with a unique index over account, period and dimensions', async () => {
    const job = reportJob('wh_shape', ['day', 'zone_id', 'tier', 'country']);
    const result = await ensure([job]);
    expect(result.created).toEqual(['report_wh_shape']);
    expect(await columns('report_wh_shape')).toEqual([
      'period_start date not null',
      'period_end date not null',
      'day date not null',
      'zone_id bigint not null',
      'tier smallint not null',
      'country text not null',
      'ad_requests bigint not null',
      'filled_impressions bigint not null',
      'impressions bigint not null',
      'measurable_impressions bigint not null',
      'viewable_impressions bigint not null',
      'load_id bigint not null',
      'loaded_at timestamp with time zone not null',
      'account text not null',
    ]);
    const { rows } = await db.pool.query<{ d: string }>(
      `SELECT indexdef AS d FROM pg_indexes WHERE schemaname = $1 AND tablename = 'report_wh_shape' ORDER BY indexname`,
      [S],
    );
    // ON ONLY: the table is partitioned by month, and each partition gets its own copy of the index.
    expect(rows.map((r) => r.d.replace(/ USING btree/, ''))).toEqual([
      `CREATE UNIQUE INDEX report_wh_shape_key ON ONLY ${S}.report_wh_shape (account, period_start, period_end, day, zone_id, tier, ((md5(country))::uuid))`,
      `CREATE INDEX report_wh_shape_zone_id ON ONLY ${S}.report_wh_shape (zone_id)`,
    ]);
    // The unique index really refuses a second copy of a row.
    await partitionFor(db.pool, S, 'report_wh_shape', '2026-01-01');
    const insert = `INSERT INTO ${S}.report_wh_shape VALUES ('2026-01-01','2026-01-01','2026-01-01',1,1,'DE',0,0,0,0,0,1,now(),'default')`;
    await db.pool.query(insert);
    await expect(db.pool.query(insert)).rejects.toMatchObject({ code: '23505' });
    // The same row of another account is another row.
    await db.pool.query(insert.replace("'default')", "'north')"));
    await db.pool.query(`DELETE FROM ${S}.report_wh_shape WHERE account = 'north'`);
  });

  it('is idempotent, and re-adds a dropped index without touching data', async () => {
    const job = reportJob('wh_shape', ['day', 'zone_id', 'tier', 'country']);
    await db.pool.query(`DROP INDEX ${S}.report_wh_shape_zone_id`);
    const result = await ensure([job]);
    expect(result).toMatchObject({
      created: [],
      unchanged: ['report_wh_shape'],
      indexesAdded: ['report_wh_shape_zone_id'],
    });
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${S}.report_wh_shape`);
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('starts a new version of the table for changed dimensions, the old one keeping its rows', async () => {
    const changed = reportJob('wh_shape', ['day', 'campaign_id', 'tier']);
    const result = await ensure([changed]);
    expect(result.evolving).toEqual([
      { report: 'wh_shape', from: 1, to: 2, table: 'report_wh_shape__v2', started: true },
    ]);
    expect(result.created).toEqual(['report_wh_shape__v2']);
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*)::int FROM ${S}.report_wh_shape) AS old,
              (SELECT count(*)::int FROM ${S}.report_wh_shape__v2) AS new,
              (SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'report_wh_shape__v2' AND indexname LIKE '%key') AS key`,
      [S],
    );
    expect(rows).toEqual([{ old: 1, new: 0, key: 'report_wh_shape__v2_key' }]);
    // Reordered dimensions are another shape too; the change being built is retired.
    const reordered = await ensure([reportJob('wh_shape', ['day', 'tier', 'zone_id', 'country'])]);
    expect(reordered.evolving).toMatchObject([{ report: 'wh_shape', from: 1, to: 3 }]);
    // Back to the serving shape: nothing is building any more.
    const back = await ensure([reportJob('wh_shape', ['day', 'zone_id', 'tier', 'country'])]);
    expect(back.evolving).toEqual([]);
  });

  it('refuses a retyped column, saying what differs and how to proceed, and changes nothing', async () => {
    await db.pool.query(`CREATE TABLE ${S}.report_wh_typed (LIKE ${S}.report_wh_shape)`);
    await db.pool.query(`ALTER TABLE ${S}.report_wh_typed ALTER COLUMN tier TYPE integer`);
    const other = reportJob('wh_new_one', ['day']);
    const attempt = ensure([other, reportJob('wh_typed', ['day', 'zone_id', 'tier', 'country'])]);
    await expect(attempt).rejects.toBeInstanceOf(SchemaRefusal);
    await expect(attempt).rejects.toThrow(/column tier is integer, expected smallint/);
    // All or nothing: the other table was not created.
    const { rows } = await db.pool.query(`SELECT to_regclass($1) AS other`, [`${S}.report_wh_new_one`]);
    expect(rows).toEqual([{ other: null }]);
  });

  it('reports a table whose definition is gone as orphaned and keeps it', async () => {
    const result = await ensure([]);
    expect(result.orphaned).toEqual(expect.arrayContaining(['report_wh_shape', 'report_daily_campaign']));
    expect(result.orphaned).not.toContain('report_loads');
  });
});
