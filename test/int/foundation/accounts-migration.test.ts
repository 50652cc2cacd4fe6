// sql/010_accounts.sql and `adops migrate` on a warehouse of the release before accounts: every row
// stays, under account `default`; keys, the period lock and loads then work per account.
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadJobs, type ReportJob } from '../../../src/config/jobs.js';
import { loadPulledPeriod } from '../../helpers/load.js';
import { migrate } from '../../../src/warehouse/migrate.js';
import { setupWarehouse } from '../../../src/warehouse/setup.js';
import { writeCatalogue } from '../../../src/warehouse/catalogue/write.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { pulled, type Row } from '../warehouse/fixtures/reports.js';

const S = 'wh';
let db: TestDatabase;
let report: ReportJob;

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  db.pool.on('error', () => undefined);
  const found = loadJobs('jobs').reports.find((r) => r.name === 'daily_campaign');
  if (found === undefined) throw new Error('jobs/ has no daily_campaign report');
  report = found;
});
afterAll(async () => {
  await db?.drop();
});

/** A warehouse as the release before accounts left it: migrations 001-009, a report table, data. */
async function previousRelease(): Promise<void> {
  const before = mkdtempSync(join(tmpdir(), 'adops-sql-'));
  for (const file of readdirSync('sql').filter((f) => /^00\d_.*\.sql$/.test(f)))
    copyFileSync(join('sql', file), join(before, file));
  await migrate(db.pool, { schema: S, sqlDir: before });
  // The table, its key, its version row and its BI view exactly as that release created them.
  await db.pool.query(`
    SET search_path TO ${S};
    CREATE TABLE report_daily_campaign (
      period_start date NOT NULL, period_end date NOT NULL, day date NOT NULL, campaign_id bigint NOT NULL,
      ad_requests bigint NOT NULL, filled_impressions bigint NOT NULL, impressions bigint NOT NULL,
      measurable_impressions bigint NOT NULL, viewable_impressions bigint NOT NULL,
      load_id bigint NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now());
    CREATE UNIQUE INDEX report_daily_campaign_key ON report_daily_campaign (period_start, period_end, day, campaign_id);
    CREATE INDEX report_daily_campaign_campaign_id ON report_daily_campaign (campaign_id);
    INSERT INTO report_versions (report, version, dimensions, table_name, state)
      VALUES ('daily_campaign', 1, '{day,campaign_id}', 'report_daily_campaign', 'serving');
    CREATE VIEW bi_daily_campaign AS SELECT r.day, r.campaign_id, c.name AS campaign_name, r.impressions
      FROM report_daily_campaign r LEFT JOIN campaigns c ON c.campaign_id = r.campaign_id;
    INSERT INTO report_loads (report, period_start, period_end, dimensions, status, rows, http_attempts, fetch_token)
      VALUES ('daily_campaign', '2026-01-01', '2026-01-01', '{day,campaign_id}', 'loaded', 2, 1, 1);
    INSERT INTO report_totals VALUES ('daily_campaign', '2026-01-01', '2026-01-01', 15, 13, 11, 9, 7, 1, now());
    INSERT INTO report_raw (load_id, body_gzip, body_bytes, body_sha256, received_sha256)
      VALUES (1, '\\x00', 1, 'a', 'a');
    INSERT INTO report_daily_campaign VALUES
      ('2026-01-01', '2026-01-01', '2026-01-01', 101, 10, 9, 8, 7, 6, 1, now()),
      ('2026-01-01', '2026-01-01', '2026-01-01', 102, 5, 4, 3, 2, 1, 1, now());
    INSERT INTO campaigns (campaign_id, name, raw, synced_at) VALUES (101, 'Spring', '{}', now());
    INSERT INTO campaign_zones VALUES (101, 7);
    INSERT INTO creatives (creative_id, campaign_id, name, raw, synced_at) VALUES (5, 101, 'Banner', '{}', now());
    INSERT INTO campaigns_history (campaign_id, name, deleted, valid_from) VALUES (101, 'Spring', false, now());
    INSERT INTO entity_sync_runs (run_id) VALUES ('sync-1');
    RESET search_path;`);
}

async function count(sql: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}.${sql}`);
  return rows[0]?.n ?? -1;
}

it('keeps every row of a previous release under account default, and then loads per account', async () => {
  await previousRelease();
  const result = await setupWarehouse(db.pool, { schema: S, reports: [report] });
  expect(result.applied).toContain('010_accounts.sql');
  expect(result.tables.upgraded).toContain('report_daily_campaign.account: added (existing rows: default)');
  expect(result.tables.indexesRebuilt).toContain('report_daily_campaign_key');

  for (const table of [
    'report_loads',
    'report_totals',
    'report_raw',
    'report_daily_campaign',
    'campaigns',
    'campaign_zones',
    'creatives',
    'campaigns_history',
    'entity_sync_runs',
  ])
    expect(await count(`${table} WHERE account = 'default'`), table).toBe(await count(table));
  expect(await count('report_daily_campaign')).toBe(2);
  expect(await count('campaigns')).toBe(1);
  // The BI view carries the account, and joins the catalogue of the same account.
  const view = await db.pool.query<{ account: string; campaign_name: string | null }>(
    `SELECT account, campaign_name FROM ${S}.bi_daily_campaign ORDER BY campaign_id`,
  );
  expect(view.rows).toEqual([
    { account: 'default', campaign_name: 'Spring' },
    { account: 'default', campaign_name: null },
  ]);

  // Every primary and unique key holds the account (Citus' distribution column).
  const { rows: keys } = await db.pool.query<{ name: string; def: string }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 AND i.indisunique
        AND t.relname NOT IN ('schema_migrations', 'dim_date', 'report_versions', 'entity_sync_runs', 'entity_sync_pages')`,
    [S],
  );
  expect(keys.length).toBeGreaterThanOrEqual(9);
  for (const k of keys) expect(k.def, k.name).toMatch(/\(account, /);

  // A load of the default account replaces the migrated period; another account's is beside it.
  const rows: Row[] = [
    [
      ['2026-01-01', '101'],
      [20, 18, 16, 14, 12],
    ],
  ];
  const period = { start: '2026-01-01', end: '2026-01-01' };
  const at = new Date(Date.UTC(2026, 0, 2));
  const def = await loadPulledPeriod(db.pool, S, pulled(report, period, rows, at));
  expect(def).toMatchObject({ status: 'loaded', rows: 1 });
  const north = await loadPulledPeriod(db.pool, S, pulled(report, period, rows, at, { account: 'north' }));
  expect(north).toMatchObject({ status: 'loaded', rows: 1 });
  const { rows: loaded } = await db.pool.query<{ account: string; campaign_id: string; impressions: string }>(
    `SELECT account, campaign_id::text, impressions::text FROM ${S}.report_daily_campaign ORDER BY account`,
  );
  expect(loaded).toEqual([
    { account: 'default', campaign_id: '101', impressions: '16' },
    { account: 'north', campaign_id: '101', impressions: '16' },
  ]);
  // Each account's load chains to its own previous one only.
  const { rows: chain } = await db.pool.query<{ account: string; previous: number | null }>(
    `SELECT account, previous_load_id::int AS previous FROM ${S}.report_loads WHERE load_id > 1 ORDER BY load_id`,
  );
  expect(chain).toEqual([
    { account: 'default', previous: 1 },
    { account: 'north', previous: null },
  ]);
  expect(await count(`report_totals WHERE account = 'north'`)).toBe(1);

  // The catalogue of another account never soft-deletes or shadows the default one's.
  await writeCatalogue(db.pool, S, { campaigns: [], creatives: [] }, { account: 'north' });
  expect(await count('campaigns WHERE deleted_at IS NULL')).toBe(1);

  // migrate again: nothing left to do.
  const again = await setupWarehouse(db.pool, { schema: S, reports: [report] });
  expect(again.applied).toEqual([]);
  expect(again.tables.upgraded).toEqual([]);
  expect(again.tables.indexesRebuilt).toEqual([]);
});
