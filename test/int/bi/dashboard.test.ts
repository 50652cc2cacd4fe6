// The business dashboard works before anyone opens Grafana: every panel's SQL, its Grafana macros
// and variables expanded as Grafana would, runs as the read-only BI role against a warehouse the
// emulator filled, returns rows with the panel's columns, and its totals equal report_totals.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { setupBiRole } from '../../../src/schema/bi-role.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { lastDays, pullDays, REPORTS, syncCatalogue } from './fill.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const GRAFANA = join(ROOT, 'deploy', 'grafana');
const ROLE = `adops_bi_${randomBytes(4).toString('hex')}`;
const DAYS = lastDays(3);

interface Target {
  readonly rawSql: string;
  readonly format: string;
  readonly datasource: { readonly type: string; readonly uid: string };
}
interface Dashboard {
  readonly uid: string;
  readonly templating: { readonly list: ReadonlyArray<{ name: string; type: string; query: string }> };
  readonly panels: ReadonlyArray<{ title: string; targets: readonly Target[] }>;
}
const dashboard = JSON.parse(readFileSync(join(GRAFANA, 'adops-business.json'), 'utf8')) as Dashboard;

const COUNTS = ['ad_requests', 'filled_impressions', 'impressions'];
const RATES = ['fill_rate', 'viewability_rate'];
/** The columns each panel must return; a new panel needs its line here. */
const COLUMNS: Record<string, readonly string[]> = {
  Impressions: ['impressions'],
  'Fill rate': ['fill_rate', 'filled_impressions', 'ad_requests'],
  Viewability: ['viewability_rate', 'viewable_impressions', 'measurable_impressions'],
  'Ad requests': ['ad_requests'],
  'Impressions by day': ['time', ...COUNTS],
  'Fill rate and viewability by day': ['time', ...RATES, ...COUNTS],
  'By account': ['account', ...COUNTS, ...RATES],
  'By campaign': ['account', 'campaign_id', 'campaign_name', ...COUNTS, ...RATES],
  'By device': ['device', ...COUNTS, ...RATES],
  'By country': ['country', ...COUNTS, ...RATES],
  'Campaigns behind': [
    'account',
    'campaign_id',
    'name',
    'goal_event',
    'goal_period',
    'goal_speed',
    'goal_value',
    'delivered',
    'expected',
    'pace',
    'projected',
    'flight_end',
    'as_of',
    'provisional',
  ],
};

/**
 * The SQL Grafana's PostgreSQL datasource would send for a dashboard range of whole UTC days and
 * the account variable set to `accounts`: the macros the dashboard uses, expanded as documented.
 * Anything left starting with `$` is a macro or variable this test does not know: it fails.
 */
function expand(sql: string, from: string, to: string, accounts: readonly string[]): string {
  const expanded = sql
    .replace(/\$__timeFilter\((\w+)\)/g, `$1 BETWEEN '${from}T00:00:00Z' AND '${to}T23:59:59Z'`)
    .replace(/\$__timeGroupAlias\((\w+),\s*1d\)/g, 'floor(extract(epoch from $1)/86400)*86400 AS "time"')
    .replace(/\$__timeGroup\((\w+),\s*1d\)/g, 'floor(extract(epoch from $1)/86400)*86400')
    .replace(/\$\{schema\}/g, TEST_SCHEMA)
    .replace(/\$\{?account\}?/g, accounts.map((a) => `'${a}'`).join(','));
  expect(expanded, sql).not.toMatch(/\$/);
  return expanded;
}

let db: TestDatabase;
let emulator: RunningEmulator;
let asRole: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  emulator = await startEmulator({ seed: 21, cellsPerDay: 80, lateDataDays: 0 });
  await syncCatalogue(db, emulator);
  await pullDays(
    db,
    emulator,
    DAYS,
    REPORTS.filter((r) => r.name === 'daily_campaign' || r.name === 'daily_geo_device'),
  );
  await setupBiRole(warehouseOf(db.pool, TEST_SCHEMA), ROLE);
  asRole = new pg.Client({ connectionString: db.url });
  await asRole.connect();
  await asRole.query(`SET ROLE ${ROLE}`);
});
afterAll(async () => {
  await asRole?.end();
  await emulator?.close();
  await db?.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${ROLE}`);
  await admin.end();
});

/** report_totals of `report` over the test's days: what every panel over its view must add up to. */
async function totals(report: string): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<Record<string, string>>(
    `SELECT sum(ad_requests) AS ad_requests, sum(filled_impressions) AS filled_impressions,
            sum(impressions) AS impressions, sum(measurable_impressions) AS measurable_impressions,
            sum(viewable_impressions) AS viewable_impressions
       FROM ${TEST_SCHEMA}.report_totals WHERE report = $1 AND period_start BETWEEN $2 AND $3`,
    [report, DAYS[0], DAYS.at(-1)],
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
}

describe('the business dashboard', () => {
  it('has a test expectation for each panel and reads the warehouse datasource variable', () => {
    expect(dashboard.panels.map((p) => p.title).sort()).toEqual(Object.keys(COLUMNS).sort());
    for (const p of dashboard.panels)
      for (const t of p.targets)
        expect(t.datasource, p.title).toEqual({ type: 'grafana-postgresql-datasource', uid: '${warehouse}' });
    const names = dashboard.templating.list.map((v) => v.name);
    expect(names).toEqual(expect.arrayContaining(['warehouse', 'schema', 'account']));
  });

  it('answers every panel as the read-only role, with its columns and totals equal to report_totals', async () => {
    const account = dashboard.templating.list.find((v) => v.name === 'account');
    const accounts = await asRole.query<{ account: string }>(expand(account?.query ?? '', '', '', []));
    expect(accounts.rows.map((r) => r.account)).toEqual(['default']);
    for (const panel of dashboard.panels)
      for (const target of panel.targets) {
        const sql = expand(target.rawSql, DAYS[0] as string, DAYS.at(-1) as string, ['default']);
        const result = await asRole.query<Record<string, string | number | null>>(sql);
        expect(result.rows.length, panel.title).toBeGreaterThan(0);
        expect(
          result.fields.map((f) => f.name),
          panel.title,
        ).toEqual(COLUMNS[panel.title]);
        const report = /bi_(\w+)\b/.exec(sql)?.[1] ?? '';
        const expected = await totals(report);
        for (const column of Object.keys(expected)) {
          if (!result.fields.some((f) => f.name === column)) continue;
          const sum = result.rows.reduce((s, r) => s + Number(r[column]), 0);
          expect(sum, `${panel.title}: ${column}`).toBe(expected[column]);
        }
        // A rate over the whole range is the ratio of the totals, not an average of daily rates.
        if (result.rows.length === 1 && result.fields.some((f) => f.name === 'fill_rate'))
          expect(Number(result.rows[0]?.fill_rate)).toBeCloseTo(
            (expected.filled_impressions ?? 0) / (expected.ad_requests ?? 1),
            12,
          );
        if (panel.title.endsWith('by day')) expect(result.rows).toHaveLength(DAYS.length);
      }
  });

  it('shows campaign names from the catalogue', async () => {
    const panel = dashboard.panels.find((p) => p.title === 'By campaign');
    const sql = expand(panel?.targets[0]?.rawSql ?? '', DAYS[0] as string, DAYS.at(-1) as string, [
      'default',
    ]);
    const { rows } = await asRole.query<{ campaign_name: string | null }>(sql);
    expect(rows.filter((r) => r.campaign_name !== null).length).toBeGreaterThan(0);
  });
});

describe('the pacing panel', () => {
  it('lists exactly the campaigns bi_campaign_pacing calls behind, as the read-only role', async () => {
    const panel = dashboard.panels.find((p) => p.title === 'Campaigns behind');
    const sql = expand(panel?.targets[0]?.rawSql ?? '', DAYS[0] as string, DAYS.at(-1) as string, [
      'default',
    ]);
    const key = (r: { account: string; campaign_id: string }) => `${r.account} ${r.campaign_id}`;
    const listed = await asRole.query<{ account: string; campaign_id: string }>(sql);
    const { rows: all } = await db.pool.query<{ account: string; campaign_id: string; state: string }>(
      `SELECT account, campaign_id, state FROM ${TEST_SCHEMA}.bi_campaign_pacing`,
    );
    const behind = all.filter((r) => r.state === 'behind').map(key);
    // The emulator's campaigns with goals include ones under-delivering, and others not behind.
    expect(behind.length).toBeGreaterThan(0);
    expect(all.length).toBeGreaterThan(behind.length);
    expect(listed.rows.map(key).sort()).toEqual(behind.sort());
  });
});

describe('the compose setup of Grafana', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { command?: string[]; volumes?: string[] }>;
  };
  const sources = parse(readFileSync(join(GRAFANA, 'provisioning', 'datasources', 'adops.yml'), 'utf8')) as {
    datasources: Array<{ type: string; user?: string }>;
  };

  it('provisions both datasources, the warehouse one through the role migrate grants', () => {
    expect(compose.services.grafana?.volumes).toEqual(
      expect.arrayContaining(['./deploy/grafana/provisioning:/etc/grafana/provisioning:ro']),
    );
    expect(sources.datasources.map((d) => d.type).sort()).toEqual([
      'grafana-postgresql-datasource',
      'prometheus',
    ]);
    const user = sources.datasources.find((d) => d.type === 'grafana-postgresql-datasource')?.user;
    expect(compose.services.migrate?.command).toEqual(['migrate', '--bi-role', user]);
    expect(readFileSync(join(ROOT, 'deploy', 'postgres', 'bi-role.sql'), 'utf8')).toContain(
      `CREATE ROLE ${user} LOGIN`,
    );
  });
});
