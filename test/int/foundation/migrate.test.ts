import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqlDir } from '../../../src/platform/config/files.js';
import { migrate, readMigrations } from '../../../src/schema/migrate.js';
import { SchemaRefusal } from '../../../src/schema/versions.js';
import { execute, warehouseOf } from '../../../src/platform/pg/handle.js';
import { packBody, readArchivedBody } from '../../../src/pull/archive.js';
import { archiveBodySql } from '../../../src/pull/sql.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;
let dir: string;

beforeEach(async () => {
  db = await createTestDatabase({ empty: true });
  dir = mkdtempSync(join(tmpdir(), 'adops-sql-'));
});
afterEach(async () => {
  await db.drop();
});

const write = (file: string, sql: string) => writeFileSync(join(dir, file), sql);

async function appliedVersions(pool: pg.Pool, schema = 'wh'): Promise<number[]> {
  const { rows } = await pool.query<{ version: number }>(
    `SELECT version FROM ${schema}.schema_migrations ORDER BY version`,
  );
  return rows.map((r) => r.version);
}

describe('migrate', () => {
  it('applies files in numeric order, each once, inside the target schema', async () => {
    write('010_second.sql', 'INSERT INTO seen (step) VALUES (10);');
    write('002_first.sql', 'CREATE TABLE seen (step int); INSERT INTO seen (step) VALUES (2);');
    const first = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(first.applied).toEqual(['002_first.sql', '010_second.sql']);
    const again = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(again).toEqual({ applied: [], alreadyApplied: 2 });
    const { rows } = await db.pool.query('SELECT step FROM wh.seen ORDER BY step');
    expect(rows).toEqual([{ step: 2 }, { step: 10 }]);
    expect(await appliedVersions(db.pool)).toEqual([2, 10]);
  });

  it('refuses a changed applied file and names it', async () => {
    write('001_a.sql', 'CREATE TABLE a (x int);');
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    write('001_a.sql', 'CREATE TABLE a (x bigint);');
    await expect(migrate(db.pool, { schema: 'wh', sqlDir: dir })).rejects.toThrow(
      /sql\/001_a.sql was changed after it was applied .* add .*new numbered file|sql\/001_a.sql was changed after it was applied/,
    );
  });

  it('rolls back a failing file whole and records nothing for it', async () => {
    write('001_ok.sql', 'CREATE TABLE ok (x int);');
    write('002_bad.sql', 'CREATE TABLE half (x int); SELECT no_such_function();');
    await expect(migrate(db.pool, { schema: 'wh', sqlDir: dir })).rejects.toThrow(
      /sql\/002_bad.sql failed and was rolled back/,
    );
    expect(await appliedVersions(db.pool)).toEqual([1]);
    const { rows } = await db.pool.query("SELECT to_regclass('wh.half') AS t");
    expect(rows[0].t).toBeNull();
  });

  it('refuses badly named files and duplicate versions', () => {
    write('1-init.sql', 'SELECT 1;');
    expect(() => readMigrations(dir)).toThrow(SchemaRefusal);
    const other = mkdtempSync(join(tmpdir(), 'adops-sql-'));
    writeFileSync(join(other, '001_a.sql'), 'SELECT 1;');
    writeFileSync(join(other, '001_b.sql'), 'SELECT 1;');
    expect(() => readMigrations(other)).toThrow(/share version 1/);
  });

  it('serializes concurrent runs: each migration is applied exactly once', async () => {
    // Not idempotent on purpose: a second application would fail on the duplicate table.
    write('001_t.sql', 'CREATE TABLE t (x int); INSERT INTO t VALUES (1); SELECT pg_sleep(0.2);');
    write('002_u.sql', 'INSERT INTO t VALUES (2);');
    const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: db.url, max: 1 }));
    // pool.end() resolves before its sockets close: the database's DROP may still terminate one.
    for (const p of pools) p.on('error', () => undefined);
    try {
      const results = await Promise.all(pools.map((pool) => migrate(pool, { schema: 'wh', sqlDir: dir })));
      expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, 2]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    const { rows } = await db.pool.query('SELECT x FROM wh.t ORDER BY x');
    expect(rows).toEqual([{ x: 1 }, { x: 2 }]);
  });

  it('runs the after-migrations step under the same lock', async () => {
    write('001_a.sql', 'CREATE TABLE a (x int);');
    await migrate(db.pool, {
      schema: 'wh',
      sqlDir: dir,
      afterMigrations: async (client) => {
        const { rows } = await client.query(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
        );
        expect(rows[0].n).toBe(1);
      },
    });
  });
});

// From release 1.0 every schema change is a new numbered file after the baseline: this is the
// upgrade path each such file takes, and the refusal of a warehouse that pre-release builds made.
describe('upgrades from the baseline', () => {
  it('applies a later numbered file to a warehouse migrated to the baseline, keeping its rows', async () => {
    copyFileSync(join(sqlDir(), '001_baseline.sql'), join(dir, '001_baseline.sql'));
    expect((await migrate(db.pool, { schema: 'wh', sqlDir: dir })).applied).toEqual(['001_baseline.sql']);
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts)
       VALUES ('daily', '2026-01-01', '2026-01-01', '{day}', 'failed', 1)`,
    );
    write('002_load_note.sql', "ALTER TABLE report_loads ADD COLUMN note text NOT NULL DEFAULT 'kept';");
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['002_load_note.sql'], alreadyApplied: 1 });
    const { rows } = await db.pool.query('SELECT report, note FROM wh.report_loads');
    expect(rows).toEqual([{ report: 'daily', note: 'kept' }]);
    expect(await appliedVersions(db.pool)).toEqual([1, 2]);
  });

  it('upgrades a 1.0 warehouse with sql/002_shared_state.sql: its rows kept, the shared limit working', async () => {
    copyFileSync(join(sqlDir(), '001_baseline.sql'), join(dir, '001_baseline.sql'));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts)
       VALUES ('daily', '2026-01-01', '2026-01-01', '{day}', 'failed', 1)`,
    );
    // Only the files up to 002: later ones have upgrade tests of their own.
    copyFileSync(join(sqlDir(), '002_shared_state.sql'), join(dir, '002_shared_state.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['002_shared_state.sql'], alreadyApplied: 1 });
    const { rows } = await db.pool.query('SELECT report, status FROM wh.report_loads');
    expect(rows).toEqual([{ report: 'daily', status: 'failed' }]);
    // The functions find their tables through the schema they were made in, whatever the caller's path.
    const { rows: taken } = await db.pool.query(
      'SELECT taken, paused FROM wh.api_limit_take($1, 5, 1000, 3, 1000)',
      ['k'],
    );
    expect(taken).toEqual([{ taken: 3, paused: false }]);
    expect(await appliedVersions(db.pool)).toEqual([1, 2]);
  });

  it('upgrades a warehouse at 002 with sql/003_catalogue_comments.sql: every catalogue column commented, its rows kept', async () => {
    for (const file of ['001_baseline.sql', '002_shared_state.sql'])
      copyFileSync(join(sqlDir(), file), join(dir, file));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    const uncommented = async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_attribute a
            WHERE a.attrelid = ANY (ARRAY['wh.campaigns', 'wh.creatives', 'wh.campaigns_history',
                    'wh.creatives_history', 'wh.campaign_zones']::regclass[])
              AND a.attnum > 0 AND NOT a.attisdropped AND col_description(a.attrelid, a.attnum) IS NULL`,
        )
      ).rows[0]?.n;
    expect(await uncommented()).toBe(43);
    await db.pool.query(
      `INSERT INTO wh.campaigns (campaign_id, name, event_impressions, raw, synced_at)
       VALUES (7, 'Seven', 1000, '{}', now())`,
    );
    copyFileSync(join(sqlDir(), '003_catalogue_comments.sql'), join(dir, '003_catalogue_comments.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['003_catalogue_comments.sql'], alreadyApplied: 2 });
    expect(await uncommented()).toBe(0);
    const { rows } = await db.pool.query('SELECT name, event_impressions::int FROM wh.campaigns');
    expect(rows).toEqual([{ name: 'Seven', event_impressions: 1000 }]);
  });

  it('upgrades a warehouse at 003 with sql/004_failed_step.sql: old rows keep a NULL step, a failed pull records its step', async () => {
    for (const file of ['001_baseline.sql', '002_shared_state.sql', '003_catalogue_comments.sql'])
      copyFileSync(join(sqlDir(), file), join(dir, file));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts, error)
       VALUES ('daily', '2026-01-01', '2026-01-01', '{day}', 'failed', 1, 'HTTP 500'),
              ('daily', '2026-01-02', '2026-01-02', '{day}', 'loaded', 1, NULL)`,
    );
    copyFileSync(join(sqlDir(), '004_failed_step.sql'), join(dir, '004_failed_step.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['004_failed_step.sql'], alreadyApplied: 3 });
    const { rows } = await db.pool.query(
      'SELECT status, error, failed_step FROM wh.report_loads ORDER BY period_start',
    );
    expect(rows).toEqual([
      { status: 'failed', error: 'HTTP 500', failed_step: null },
      { status: 'loaded', error: null, failed_step: null },
    ]);
    const insert = (status: string, step: string) =>
      db.pool.query(
        `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts, failed_step)
         VALUES ('daily', '2026-01-03', '2026-01-03', '{day}', $1, 1, $2)`,
        [status, step],
      );
    await insert('failed', 'parse');
    // Only the four steps, and only on a failed attempt.
    await expect(insert('failed', 'queue')).rejects.toThrow(/report_loads_failed_step_check/);
    await expect(insert('loaded', 'load')).rejects.toThrow(/report_loads_failed_step_check/);
    expect(await appliedVersions(db.pool)).toEqual([1, 2, 3, 4]);
  });

  it("upgrades a warehouse at 004 with sql/005_days_per_request.sql: totals of 1.0 read as the API's, a request's loads are found by their fetch token", async () => {
    for (const file of [
      '001_baseline.sql',
      '002_shared_state.sql',
      '003_catalogue_comments.sql',
      '004_failed_step.sql',
    ])
      copyFileSync(join(sqlDir(), file), join(dir, file));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    await db.pool.query(
      `INSERT INTO wh.report_loads (load_id, report, period_start, period_end, dimensions, status, http_attempts, fetch_token)
       VALUES (1, 'daily', '2026-01-01', '2026-01-01', '{day}', 'loaded', 1, 9)`,
    );
    await db.pool.query(
      `INSERT INTO wh.report_totals (report, period_start, period_end, impressions, load_id, loaded_at)
       VALUES ('daily', '2026-01-01', '2026-01-01', 5, 1, now())`,
    );
    copyFileSync(join(sqlDir(), '005_days_per_request.sql'), join(dir, '005_days_per_request.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['005_days_per_request.sql'], alreadyApplied: 4 });
    const { rows } = await db.pool.query('SELECT impressions::int, totals_source FROM wh.report_totals');
    expect(rows).toEqual([{ impressions: 5, totals_source: 'api' }]);
    await expect(db.pool.query("UPDATE wh.report_totals SET totals_source = 'guess'")).rejects.toThrow(
      /report_totals_totals_source_check/,
    );
    const index = await db.pool.query(
      "SELECT to_regclass('wh.report_loads_fetch_token') IS NOT NULL AS made",
    );
    expect(index.rows).toEqual([{ made: true }]);
    expect(await appliedVersions(db.pool)).toEqual([1, 2, 3, 4, 5]);
  });

  it('upgrades a warehouse at 005 with sql/006_provisional.sql: old loads are final, a provisional one is found by its index', async () => {
    const before = readdirSync(sqlDir()).filter((f) => /^\d{3}_.*\.sql$/.test(f) && f < '006');
    for (const file of before) copyFileSync(join(sqlDir(), file), join(dir, file));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts)
       VALUES ('daily', '2026-01-01', '2026-01-01', '{day}', 'loaded', 1)`,
    );
    copyFileSync(join(sqlDir(), '006_provisional.sql'), join(dir, '006_provisional.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['006_provisional.sql'], alreadyApplied: before.length });
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts, provisional)
       VALUES ('daily', '2026-01-02', '2026-01-02', '{day}', 'loaded', 1, true)`,
    );
    const { rows } = await db.pool.query(
      'SELECT period_start::text AS day, provisional FROM wh.report_loads ORDER BY period_start',
    );
    expect(rows).toEqual([
      { day: '2026-01-01', provisional: false },
      { day: '2026-01-02', provisional: true },
    ]);
    const { rows: index } = await db.pool.query(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = 'wh' AND indexname = 'report_loads_provisional'",
    );
    expect(index[0]?.indexdef).toMatch(/\(load_id\) WHERE provisional$/);
  });

  it('upgrades a warehouse with sql/007_pacing.sql: campaign.behind is told once per campaign and day', async () => {
    const before = readMigrations(sqlDir()).filter((m) => m.version < 7);
    for (const m of before) copyFileSync(join(sqlDir(), m.file), join(dir, m.file));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts)
       VALUES ('daily', '2026-01-01', '2026-01-01', '{day}', 'loaded', 1)`,
    );
    copyFileSync(join(sqlDir(), '007_pacing.sql'), join(dir, '007_pacing.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['007_pacing.sql'], alreadyApplied: before.length });
    expect((await db.pool.query('SELECT report FROM wh.report_loads')).rows).toEqual([{ report: 'daily' }]);
    const claim = (day: string) =>
      db.pool.query(
        `INSERT INTO wh.announced_pacing (account, campaign_id, day) VALUES ('default', 7, $1) ON CONFLICT DO NOTHING`,
        [day],
      );
    expect((await claim('2026-01-02')).rowCount).toBe(1);
    expect((await claim('2026-01-02')).rowCount).toBe(0);
    expect((await claim('2026-01-03')).rowCount).toBe(1);
  });

  it('upgrades a warehouse with sql/008_raw_body.sql: bodies archived gzipped still replay, new ones are stored as they came', async () => {
    const before = readMigrations(sqlDir()).filter((m) => m.version < 8);
    for (const m of before) copyFileSync(join(sqlDir(), m.file), join(dir, m.file));
    await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    const wh = warehouseOf(db.pool, 'wh');
    const load = async (day: string) =>
      Number(
        (
          await db.pool.query<{ id: string }>(
            `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts)
             VALUES ('daily', $1, $1, '{day}', 'loaded', 1) RETURNING load_id::text AS id`,
            [day],
          )
        ).rows[0]?.id,
      );
    const old = Buffer.from('{"items":{},"totals":{"impressions":1}}');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const oldId = await load('2026-01-01');
    await db.pool.query(
      `INSERT INTO wh.report_raw (load_id, body_gzip, body_bytes, body_sha256, received_sha256)
       VALUES ($1, $2, $3, $4, $4)`,
      [oldId, gzipSync(old), old.length, sha(old)],
    );
    copyFileSync(join(sqlDir(), '008_raw_body.sql'), join(dir, '008_raw_body.sql'));
    const upgraded = await migrate(db.pool, { schema: 'wh', sqlDir: dir });
    expect(upgraded).toEqual({ applied: ['008_raw_body.sql'], alreadyApplied: before.length });
    expect(await readArchivedBody(wh, oldId)).toEqual(old);
    const fresh = Buffer.from('{"items":{"2026-01-02":{}}}');
    const newId = await load('2026-01-02');
    await execute(wh, archiveBodySql('wh', 'default', newId, await packBody(fresh)));
    expect(await readArchivedBody(wh, newId)).toEqual(fresh);
    // A body past 8 MB (a raised ADOPS_STREAM_BODY_MB, a replay of a big one) is still gzipped.
    const big = Buffer.alloc(8_000_001, 0x61);
    const bigId = await load('2026-01-03');
    await execute(wh, archiveBodySql('wh', 'default', bigId, await packBody(big)));
    expect(await readArchivedBody(wh, bigId)).toEqual(big);
    const { rows } = await db.pool.query(
      'SELECT load_id::int AS id, body IS NOT NULL AS body, body_gzip IS NOT NULL AS gzip FROM wh.report_raw ORDER BY load_id',
    );
    expect(rows).toEqual([
      { id: oldId, body: false, gzip: true },
      { id: newId, body: true, gzip: false },
      { id: bigId, body: false, gzip: true },
    ]);
    // Exactly one place holds a body.
    await expect(
      db.pool.query('UPDATE wh.report_raw SET body_gzip = $1 WHERE load_id = $2', [gzipSync(fresh), newId]),
    ).rejects.toThrow(/report_raw_one_body/);
    // Postgres compresses the body: with lz4 where the server has it.
    const { rows: lz4 } = await db.pool.query<{ has: boolean; method: string }>(
      `SELECT 'lz4' = ANY (s.enumvals) AS has, a.attcompression::text AS method
         FROM pg_settings s, pg_attribute a
        WHERE s.name = 'default_toast_compression' AND a.attrelid = 'wh.report_raw'::regclass AND a.attname = 'body'`,
    );
    expect(lz4[0]?.method).toBe(lz4[0]?.has === true ? 'l' : '');
  });

  it('refuses a warehouse that ran the numbered files of a pre-release build, saying to recreate it', async () => {
    await db.pool.query('CREATE SCHEMA wh');
    await db.pool.query(
      `CREATE TABLE wh.schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
         checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    await db.pool.query(
      "INSERT INTO wh.schema_migrations (version, name, checksum) VALUES (1, 'schema', 'x'), (2, 'entities', 'y')",
    );
    const run = migrate(db.pool, { schema: 'wh', sqlDir: sqlDir() });
    await expect(run).rejects.toThrow(SchemaRefusal);
    await expect(migrate(db.pool, { schema: 'wh', sqlDir: sqlDir() })).rejects.toThrow(
      /schema wh was built by a pre-release build.*Recreate the schema: DROP SCHEMA wh CASCADE/s,
    );
    expect(await appliedVersions(db.pool)).toEqual([1, 2]);
  });
});
