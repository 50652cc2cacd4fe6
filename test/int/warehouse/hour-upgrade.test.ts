// `hour` was a text column until issue 16 and is smallint since: adops migrate converts a table of
// the previous shape in place, keeping its rows and the views over it.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadJobs } from '../../../src/config/jobs.js';
import { ensureDailyViews } from '../../../src/warehouse/catalogue/daily-views.js';
import { ensureViews } from '../../../src/warehouse/catalogue/views.js';
import { SchemaDriftError } from '../../../src/warehouse/errors.js';
import { loadPulledPeriod } from '../../helpers/load.js';
import { setupWarehouse } from '../../../src/warehouse/setup.js';
import { createTableSql, tableSpec } from '../../../src/warehouse/table-spec.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { openTestDatabase, pulled, type Row } from './fixtures/reports.js';

const S = TEST_SCHEMA;
const reports = loadJobs('jobs').reports;
const hourly = reports.find((r) => r.name === 'hourly');
if (hourly === undefined) throw new Error('jobs/hourly.yaml is missing');
let db: TestDatabase;

/** Rebuilds report_hourly as the code before issue 16 created it (hour text, unpartitioned), with rows and views. */
async function previousShape(hours: readonly string[]): Promise<void> {
  await db.pool.query(`DROP TABLE ${S}.report_hourly CASCADE`);
  const spec = tableSpec(hourly as NonNullable<typeof hourly>);
  const old = {
    ...spec,
    partitioned: false,
    columns: spec.columns.map((c) => (c.name === 'hour' ? { ...c, type: 'text' } : c)),
  };
  const sql = createTableSql(S, old);
  await db.pool.query(sql.table);
  for (const ix of sql.indexes) await db.pool.query(ix);
  for (const [i, hour] of hours.entries())
    await db.pool.query(
      `INSERT INTO ${S}.report_hourly (period_start, period_end, day, hour, ad_requests, filled_impressions,
         impressions, measurable_impressions, viewable_impressions, load_id)
       VALUES ('2026-03-01', '2026-03-01', '2026-03-01', $1, $2, $3, 1, 1, 1, 1)`,
      [hour, 100 + i, 50 + i],
    );
  const client = await db.pool.connect();
  try {
    await ensureViews(client, S, [hourly as NonNullable<typeof hourly>]);
    await ensureDailyViews(client, S, [hourly as NonNullable<typeof hourly>]);
  } finally {
    client.release();
  }
  // A dashboard's own view over ours, with a grant and a comment: it must survive the conversion.
  await db.pool.query(
    `CREATE VIEW ${S}.afternoon AS SELECT day, hour, ad_requests FROM ${S}.bi_hourly WHERE hour::int >= 12`,
  );
  await db.pool.query(`GRANT SELECT ON ${S}.afternoon TO PUBLIC`);
  await db.pool.query(`COMMENT ON VIEW ${S}.afternoon IS 'hours after noon'`);
}

async function columnType(table: string, column: string): Promise<string | undefined> {
  const { rows } = await db.pool.query<{ t: string }>(
    `SELECT data_type AS t FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`,
    [S, table, column],
  );
  return rows[0]?.t;
}

beforeEach(async () => {
  db = await openTestDatabase();
});
afterEach(async () => {
  await db?.drop();
});

describe('adops migrate on a report table whose hour is text', () => {
  it('converts hour to smallint in place, keeps the rows and the views over it, and loads new periods afterwards', async () => {
    await previousShape(['00', '07', '13', '23']);
    expect(await columnType('report_hourly', 'hour')).toBe('text');

    // Through the command an operator runs.
    const out = new PassThrough();
    let stdout = '';
    out.on('data', (d: Buffer) => (stdout += d.toString()));
    const env = { DATABASE_URL: db.url, ADOPS_SCHEMA: S, ADOPS_JOBS_DIR: 'jobs', LOG_LEVEL: 'silent' };
    expect(await main(['node', 'adops', 'migrate'], env, out, new PassThrough())).toBe(0);
    expect(stdout).toContain(`converted ${S}.report_hourly.hour: text -> smallint\n`);
    expect(await columnType('report_hourly', 'hour')).toBe('smallint');
    expect(await columnType('bi_hourly', 'hour')).toBe('smallint');
    const kept = await db.pool.query(
      `SELECT hour, ad_requests::int AS n FROM ${S}.report_hourly ORDER BY hour`,
    );
    expect(kept.rows).toEqual([
      { hour: 0, n: 100 },
      { hour: 7, n: 101 },
      { hour: 13, n: 102 },
      { hour: 23, n: 103 },
    ]);
    // The user's view was re-created with its grant and comment, and reads the new type.
    const user = await db.pool.query(`SELECT hour FROM ${S}.afternoon ORDER BY hour`);
    expect(user.rows).toEqual([{ hour: 13 }, { hour: 23 }]);
    const meta = await db.pool.query(
      `SELECT obj_description($1::regclass, 'pg_class') AS comment,
              has_table_privilege('public', $1, 'SELECT') AS public_select`,
      [`${S}.afternoon`],
    );
    expect(meta.rows).toEqual([{ comment: 'hours after noon', public_select: true }]);

    // New periods load through both write paths, with the API's zero-padded hour keys.
    const job = hourly as NonNullable<typeof hourly>;
    const rows = (day: string): Row[] => [
      [
        [day, '00'],
        [10, 9, 8, 7, 6],
      ],
      [
        [day, '09'],
        [20, 10, 9, 8, 4],
      ],
      [
        [day, '17'],
        [30, 3, 3, 3, 3],
      ],
    ];
    const at = new Date(Date.UTC(2026, 2, 10));
    await loadPulledPeriod(
      db.pool,
      S,
      pulled(job, { start: '2026-03-02', end: '2026-03-02' }, rows('2026-03-02'), at),
    );
    await loadPulledPeriod(
      db.pool,
      S,
      pulled(job, { start: '2026-03-03', end: '2026-03-03' }, rows('2026-03-03'), at),
      {
        inlineMaxRows: 0,
      },
    );
    const bi = await db.pool.query(
      `SELECT day::text, hour, ad_requests::int AS n FROM ${S}.bi_hourly WHERE day > '2026-03-01' ORDER BY day, hour`,
    );
    expect(bi.rows).toEqual(
      ['2026-03-02', '2026-03-03'].flatMap((day) => [
        { day, hour: 0, n: 10 },
        { day, hour: 9, n: 20 },
        { day, hour: 17, n: 30 },
      ]),
    );
    const daily = await db.pool.query(
      `SELECT day::text, ad_requests::int AS n FROM ${S}.bi_hourly_daily ORDER BY day`,
    );
    expect(daily.rows).toEqual([
      { day: '2026-03-01', n: 406 },
      { day: '2026-03-02', n: 60 },
      { day: '2026-03-03', n: 60 },
    ]);

    // Once converted, migrate has nothing left to do.
    const again = await setupWarehouse(db.pool, { schema: S, reports });
    expect(again.tables.upgraded).toEqual([]);
  });

  it('refuses an hour that is not a whole number, naming it, and changes nothing', async () => {
    await previousShape(['07', '13:00']);
    const attempt = setupWarehouse(db.pool, { schema: S, reports });
    await expect(attempt).rejects.toBeInstanceOf(SchemaDriftError);
    await expect(attempt).rejects.toThrow(
      /report_hourly\.hour holds a value that is not a smallint \(invalid input syntax for type smallint: "13:00"\).*Nothing was changed/,
    );
    expect(await columnType('report_hourly', 'hour')).toBe('text');
    const views = await db.pool.query(
      `SELECT table_name FROM information_schema.views WHERE table_schema = $1 AND table_name IN ('bi_hourly', 'bi_hourly_daily', 'afternoon') ORDER BY 1`,
      [S],
    );
    expect(views.rows.map((r: { table_name: string }) => r.table_name)).toEqual([
      'afternoon',
      'bi_hourly',
      'bi_hourly_daily',
    ]);
  });

  it('still refuses a text hour in a table that also differs otherwise, converting nothing', async () => {
    await previousShape(['07']);
    await db.pool.query(`ALTER TABLE ${S}.report_hourly ADD COLUMN extra text`);
    await expect(setupWarehouse(db.pool, { schema: S, reports })).rejects.toThrow(
      /column extra \(text\) is not in the definition/,
    );
    expect(await columnType('report_hourly', 'hour')).toBe('text');
  });
});
