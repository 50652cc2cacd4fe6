// What a change of a report's dimensions does to the objects around its table: the bi_ view
// carries every dimension of the serving version (a shipped view file that cannot is refused by
// migrate, naming the view and the dimension, and the generated view serves instead), every table
// and view migrate or the swap makes is commented, and a report with the longest valid name
// evolves like any other (every name derived from it fits Postgres' 63 bytes).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { swapVersion } from '../../../src/evolution/evolution.js';
import { setupWarehouse } from '../../../src/schema/migrate.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { runCli } from '../../helpers/run-cli.js';
import { openTestDatabase, pulled, reportJob, type Row } from '../warehouse/fixtures/reports.js';

const S = TEST_SCHEMA;
const DAYS = ['2026-03-01', '2026-03-02'];
let clock = 0;
/** A later fetch time on each call, so each load supersedes the one before. */
const later = () => new Date(Date.UTC(2026, 5, 1) + ++clock * 1000);

let db: TestDatabase;
let jobsDir: string;
beforeAll(async () => {
  db = await openTestDatabase();
  jobsDir = mkdtempSync(join(tmpdir(), 'adops-evolve-views-'));
});
afterAll(async () => {
  await db?.drop();
  rmSync(jobsDir, { recursive: true, force: true });
});

async function withClient<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await db.pool.connect();
  try {
    return await fn(c);
  } finally {
    c.release();
  }
}

/** `adops migrate` on the test database with the definitions of `jobsDir`. */
function migrateCli() {
  return runCli(['migrate'], {
    DATABASE_URL: db.url,
    ADOPS_SCHEMA: S,
    ADOPS_JOBS_DIR: jobsDir,
    LOG_LEVEL: 'silent',
  });
}

/** Relations of the schema whose name starts with `prefix`, with their kind and comment. */
async function relations(prefix: string) {
  const { rows } = await db.pool.query<{ name: string; kind: string; comment: string | null }>(
    `SELECT c.relname AS name, c.relkind::text AS kind, obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND left(c.relname, length($2)) = $2 ORDER BY 1`,
    [S, prefix],
  );
  return rows;
}

/** Tables and views starting with `prefix` without a comment, and their columns without one. */
async function uncommented(prefix: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND left(c.relname, length($2)) = $2 AND c.relkind IN ('r', 'p', 'v')
        AND obj_description(c.oid, 'pg_class') IS NULL
     UNION ALL
     SELECT c.relname || '.' || a.attname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND left(c.relname, length($2)) = $2 AND c.relkind IN ('p', 'v')
        AND col_description(c.oid, a.attnum) IS NULL
     ORDER BY 1`,
    [S, prefix],
  );
  return rows.map((r) => r.name);
}

describe('a report whose dimensions change', () => {
  it("after the swap bi_daily_zone has one row per its report's key, ad_format included: migrate refuses the shipped view that lacks it, naming both, and every table and view is commented", async () => {
    const OLD: Dimension[] = ['day', 'zone_id'];
    const NEW: Dimension[] = ['day', 'zone_id', 'ad_format'];
    const oldJob = reportJob('daily_zone', OLD);
    const newJob = reportJob('daily_zone', NEW);
    // Each old row (day, zone) is split over three ad formats in the new shape: same sums.
    const oldRows = (d: string): Row[] =>
      ['7', '8'].map((zone) => [
        [d, zone],
        [30, 30, 30, 30, 30],
      ]);
    const newRows = (d: string): Row[] =>
      ['7', '8'].flatMap((zone) =>
        ['banner', 'video', 'native'].map((format): Row => [
          [d, zone, format],
          [10, 10, 10, 10, 10],
        ]),
      );
    const wh = warehouseOf(db.pool, S);
    await setupWarehouse(wh, { reports: [oldJob] });
    for (const d of DAYS)
      expect(
        (await loadPulledPeriod(db.pool, S, pulled(oldJob, { start: d, end: d }, oldRows(d), later())))
          .status,
      ).toBe('loaded');

    // adops migrate with the new dimensions: version 2 is made beside version 1, and commented.
    await setupWarehouse(wh, { reports: [newJob], autoSwap: false });
    expect(await uncommented('report_daily_zone')).toEqual([]);
    for (const d of DAYS)
      await loadPulledPeriod(db.pool, S, pulled(newJob, { start: d, end: d }, newRows(d), later()));
    expect(await withClient((c) => swapVersion(c, warehouseOf(db.pool, S), newJob))).toMatchObject({
      report: 'daily_zone',
      from: 1,
      to: 2,
    });

    // One row per key of the serving version, the new dimension among the view's columns.
    const dup = await db.pool.query(
      `SELECT account, day, zone_id, ad_format, count(*)::int AS n FROM ${S}.bi_daily_zone
        GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`,
    );
    expect(dup.rows).toEqual([]);
    const total = await db.pool.query<{ n: number; impressions: string }>(
      `SELECT count(*)::int AS n, sum(impressions)::text AS impressions FROM ${S}.bi_daily_zone`,
    );
    expect(total.rows).toEqual([{ n: 12, impressions: '120' }]);
    const daily = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${S}.bi_daily_zone_daily WHERE ad_format = 'video'`,
    );
    expect(daily.rows).toEqual([{ n: 4 }]);
    // The swap made both views again, each row still saying whether it is provisional (none is here).
    for (const view of ['bi_daily_zone', 'bi_daily_zone_daily'])
      expect(
        (await db.pool.query(`SELECT count(*)::int AS n FROM ${S}.${view} WHERE provisional IS NOT FALSE`))
          .rows,
      ).toEqual([{ n: 0 }]);

    // adops migrate says which view file it refused and which dimension it lacks, and exits 0.
    writeFileSync(
      join(jobsDir, 'daily_zone.yaml'),
      'name: daily_zone\ndimensions: [day, zone_id, ad_format]\nperiod: day\n',
    );
    const run = await migrateCli();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /refused sql\/views\/daily_zone\.sql: bi_daily_zone lacks the dimension ad_format of report_daily_zone \(version 2\); generated bi_daily_zone instead/,
    );
    const cols = await db.pool.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 ORDER BY attnum`,
      [`${S}.bi_daily_zone`],
    );
    expect(cols.rows.map((r) => r.name)).toContain('ad_format');

    // Every table and view of the report, the retired version and the partitions too, is commented.
    expect(await uncommented('report_daily_zone')).toEqual([]);
    expect(await uncommented('bi_daily_zone')).toEqual([]);
    const made = await relations('report_daily_zone');
    expect(made.map((r) => r.name)).toEqual(
      expect.arrayContaining(['report_daily_zone', 'report_daily_zone__v1', 'report_daily_zone__v2']),
    );
    expect(made.find((r) => r.name === 'report_daily_zone__v2')?.comment).toMatch(
      /version 2 of report daily_zone/i,
    );
  });

  it("refuses a view file whose column of a new dimension's name is a catalogue attribute, not the report's dimension", async () => {
    // bi_daily_campaign shows the campaign's ad_format: a report split by ad_format needs its own.
    const job = reportJob('daily_campaign', ['day', 'campaign_id', 'ad_format']);
    await setupWarehouse(warehouseOf(db.pool, S), { reports: [job], autoSwap: false });
    const swapped = await withClient((c) => swapVersion(c, warehouseOf(db.pool, S), job, { force: true }));
    expect(swapped?.refused).toEqual([
      {
        report: 'daily_campaign',
        status: 'refused',
        view: 'bi_daily_campaign',
        missing: ['ad_format'],
        version: 2,
      },
    ]);
    const read = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_rewrite w JOIN pg_depend d ON d.objid = w.oid
         JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
        WHERE w.ev_class = $1::regclass AND d.refobjid = $2::regclass AND a.attname = 'ad_format'`,
      [`${S}.bi_daily_campaign`, `${S}.report_daily_campaign`],
    );
    expect(read.rows).toEqual([{ n: 1 }]);
  });

  it('a report with a 41-character name evolves: migrate, the loads and the swap work, and every name derived from it fits 63 bytes', async () => {
    const name = `l${'o'.repeat(31)}ng_report`;
    expect(name).toHaveLength(41);
    const shapes: Dimension[][] = [
      ['day', 'campaign_id'],
      ['day', 'campaign_id', 'creative_id'],
      ['day', 'campaign_id', 'creative_id', 'zone_id'],
    ];
    const wh = warehouseOf(db.pool, S);
    for (const [i, dims] of shapes.entries()) {
      const job = reportJob(name, dims);
      // adops migrate: each change of dimensions makes a new version (and its indexes, partitions).
      await setupWarehouse(wh, { reports: [job], autoSwap: false });
      for (const d of DAYS) {
        const values = dims.map((dim) => (dim === 'day' ? d : String(100 + dims.indexOf(dim))));
        const loaded = await loadPulledPeriod(
          db.pool,
          S,
          pulled(job, { start: d, end: d }, [[values, [5, 4, 3, 2, 1]]], later()),
        );
        expect(loaded.status, `version ${i + 1}, ${d}`).toBe('loaded');
      }
      if (i > 0)
        expect(await withClient((c) => swapVersion(c, warehouseOf(db.pool, S), job))).toMatchObject({
          to: i + 1,
        });
    }
    // A migrate after the last swap changes nothing and fails on nothing.
    rmSync(join(jobsDir, 'daily_zone.yaml'), { force: true });
    writeFileSync(
      join(jobsDir, `${name}.yaml`),
      `name: ${name}\ndimensions: [${shapes[2]!.join(', ')}]\nperiod: day\n`,
    );
    const run = await migrateCli();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const served = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}.bi_${name}`);
    expect(served.rows).toEqual([{ n: 2 }]);

    // Tables, partitions, indexes and constraints: none was cut short by Postgres.
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND (c.relname LIKE $2 OR c.relname LIKE $3)
       UNION ALL
       SELECT conname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname LIKE $2`,
      [S, `report_${name}%`, `bi_${name}%`],
    );
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(Buffer.byteLength(r.name), r.name).toBeLessThanOrEqual(63);
    const versions = await db.pool.query<{ table_name: string; state: string }>(
      `SELECT table_name, state FROM ${S}.report_versions WHERE report = $1 ORDER BY version`,
      [name],
    );
    expect(versions.rows.map((v) => v.state)).toEqual(['retired', 'retired', 'serving']);
  });
});
