// Every object a BI tool reads explains itself: each bi_ view and each of its columns, each
// report_<name>, dim_date and the catalogue carry a Postgres comment (what BI tools show).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnDescription } from '../../../src/schema/descriptions.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { setupBiRole } from '../../../src/schema/bi-role.js';
import { setupWarehouse } from '../../../src/schema/migrate.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';

// Roles are cluster-wide: a name of this run's own, dropped after the database that uses it.
const ROLE = `adops_desc_${randomBytes(4).toString('hex')}`;
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${ROLE}`);
  await admin.end();
});

/** Columns of the relations matching `pattern` that have no comment. */
async function uncommentedColumns(pattern: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ name: string }>(
    `SELECT c.table_name || '.' || c.column_name AS name
       FROM information_schema.columns c
      WHERE c.table_schema = $1 AND c.table_name LIKE $2
        AND col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position) IS NULL
      ORDER BY 1`,
    [TEST_SCHEMA, pattern],
  );
  return rows.map((r) => r.name);
}

describe('BI descriptions', () => {
  it('comments every bi_ view and every one of its columns', async () => {
    const { rows: views } = await db.pool.query<{ name: string; comment: string | null }>(
      `SELECT table_name AS name, obj_description(format('%I.%I', table_schema, table_name)::regclass, 'pg_class') AS comment
         FROM information_schema.views WHERE table_schema = $1 AND table_name LIKE 'bi\\_%' ORDER BY 1`,
      [TEST_SCHEMA],
    );
    // Five reports, each with its view and its per-day companion, and bi_campaign_pacing.
    expect(views.length).toBe(11);
    for (const v of views) expect(v.comment, v.name).toMatch(/\w/);
    expect(await uncommentedColumns('bi\\_%')).toEqual([]);
  });

  it('comments every report table, dim_date and the catalogue, column by column', async () => {
    const tables = ['report\\_daily\\_campaign', 'report\\_hourly', 'report\\_totals', 'dim\\_date'];
    for (const t of tables) expect(await uncommentedColumns(t)).toEqual([]);
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = ANY($2) AND obj_description(c.oid, 'pg_class') IS NULL`,
      [
        TEST_SCHEMA,
        [
          'campaigns',
          'creatives',
          'campaign_zones',
          'dim_date',
          'report_totals',
          'report_loads',
          'report_raw',
        ],
      ],
    );
    expect(rows).toEqual([]);
  });

  it('comments every column of every table and view a BI role can read, and says what each counts', async () => {
    // Whatever --bi-role grants (its list may grow), every column it lets a dashboard read is commented.
    await setupBiRole(warehouseOf(db.pool, TEST_SCHEMA), ROLE);
    const { rows } = await db.pool.query<{ relation: string; column: string; comment: string | null }>(
      `SELECT c.relname AS relation, a.attname AS column, col_description(c.oid, a.attnum) AS comment
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm')
          AND has_column_privilege($2, c.oid, a.attnum, 'SELECT')
        ORDER BY 1, a.attnum`,
      [TEST_SCHEMA, ROLE],
    );
    const readable = new Set(rows.map((r) => r.relation));
    for (const t of ['campaigns', 'creatives', 'campaigns_history', 'creatives_history', 'bi_daily_zone'])
      expect(readable, t).toContain(t);
    expect(rows.filter((r) => r.comment === null).map((r) => `${r.relation}.${r.column}`)).toEqual([]);
    const comment = (relation: string, column: string) =>
      rows.find((r) => r.relation === relation && r.column === column)?.comment ?? '';
    // What a column holds, not another view's meaning of the name.
    expect(comment('bi_daily_zone', 'campaigns_assigned')).toMatch(/assigned to the zone/);
    expect(comment('bi_daily_zone', 'campaigns_assigned')).not.toMatch(/creative/);
    // The catalogue's event_* columns are lifetime counters, not the report's traffic of a period.
    for (const column of rows.filter((r) => r.relation === 'campaigns' && r.column.startsWith('event_')))
      expect(column.comment, column.column).toMatch(/lifetime/i);
  });

  it('says how to aggregate: counters are summed, rates never averaged', async () => {
    const { rows } = await db.pool.query<{ name: string; comment: string }>(
      `SELECT a.attname AS name, col_description(a.attrelid, a.attnum) AS comment
         FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attname IN ('impressions', 'fill_rate')
        ORDER BY 1`,
      [`${TEST_SCHEMA}.bi_daily_campaign_daily`],
    );
    expect(rows[0]?.comment).toContain('Never average it');
    expect(rows[0]?.comment).toContain('sum(filled_impressions)::float / nullif(sum(ad_requests), 0)');
    expect(rows[1]?.comment).toMatch(/sum it/i);
    expect(columnDescription('some_new_dimension', 'view')).toContain('group or filter by it');
  });

  it('describes views made again after a DROP (an evolution swap, a changed view file)', async () => {
    await db.pool.query(`DROP VIEW ${TEST_SCHEMA}.bi_daily_zone_daily`);
    await db.pool.query(`DROP VIEW ${TEST_SCHEMA}.bi_daily_zone`);
    // What adops migrate does, and swapVersion after an evolution's swap: the views made again.
    await setupWarehouse(warehouseOf(db.pool, TEST_SCHEMA), { reports: loadJobs('jobs').reports });
    expect(await uncommentedColumns('bi\\_daily\\_zone%')).toEqual([]);
  });
});
