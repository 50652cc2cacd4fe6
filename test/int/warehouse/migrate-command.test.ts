import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { sqlDir } from '../../../src/platform/config/files.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { partitionFor } from '../../helpers/partitions.js';

const SCHEMA = 'wh_cli';
let db: TestDatabase;
let jobsDir: string;

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  db.pool.on('error', () => undefined);
  jobsDir = mkdtempSync(join(tmpdir(), 'adops-jobs-'));
  writeJob('alpha', '[day, campaign_id]');
  writeJob('beta', '[day, country, device]');
});
afterAll(async () => {
  await db?.drop();
});

function writeJob(name: string, dimensions: string) {
  writeFileSync(
    join(jobsDir, `${name}.yaml`),
    `name: ${name}\ndimensions: ${dimensions}\nperiod: day\nlookback_days: 3\n`,
  );
}

async function migrate(url = db.url) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const env = { DATABASE_URL: url, ADOPS_SCHEMA: SCHEMA, ADOPS_JOBS_DIR: jobsDir, LOG_LEVEL: 'silent' };
  const code = await main(['node', 'adops', 'migrate'], env, out, err);
  return { code, stdout, stderr };
}

it('adops migrate applies every sql/ file once, then creates a report_<name> table per definition', async () => {
  const files = readdirSync(sqlDir())
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const first = await migrate();
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  expect(first.stdout.split('\n').filter(Boolean)).toEqual([
    ...files.map((f) => `applied ${f}`),
    `created ${SCHEMA}.report_alpha`,
    `created ${SCHEMA}.report_beta`,
    'made 6 monthly partitions ahead',
    'bi_campaign_pacing reads report_alpha: it has day and campaign_id and the fewest other dimensions (ADOPS_PACING_REPORT may name another)',
  ]);
  const { rows } = await db.pool.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables
      WHERE table_schema = $1 AND table_name LIKE 'report%' AND table_name NOT LIKE '%\\_\\_p%' ORDER BY 1`,
    [SCHEMA],
  );
  expect(rows.map((r) => r.t)).toEqual([
    'report_alpha',
    'report_beta',
    'report_loads',
    'report_raw',
    'report_raw_parts',
    'report_totals',
    'report_versions',
  ]);
});

it('creates the shipped BI view of a defined report over its table', async () => {
  writeJob('daily_zone', '[day, zone_id]');
  const run = await migrate();
  expect(run).toMatchObject({ code: 0, stderr: '' });
  expect(run.stdout).toContain(`created ${SCHEMA}.report_daily_zone`);
  const { rows } = await db.pool.query(`SELECT to_regclass($1)::text AS view`, [`${SCHEMA}.bi_daily_zone`]);
  expect(rows).toEqual([{ view: `${SCHEMA}.bi_daily_zone` }]);
});

it('a second run finds nothing to do', async () => {
  const again = await migrate();
  expect(again).toMatchObject({ code: 0, stderr: '' });
  expect(again.stdout).toBe(
    `migrations up to date (${readdirSync(sqlDir()).filter((f) => f.endsWith('.sql')).length} applied before)\n`,
  );
});

it('concurrent runs all succeed and create each new table once', async () => {
  writeJob('gamma', '[day, zone_id]');
  const runs = await Promise.all([migrate(), migrate(), migrate()]);
  expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
  expect(runs.filter((r) => r.stdout.includes(`created ${SCHEMA}.report_gamma`))).toHaveLength(1);
});

it('a changed definition starts a new version of the table beside the old one, which keeps serving', async () => {
  await partitionFor(db.pool, SCHEMA, 'report_alpha', '2026-01-01');
  await db.pool.query(
    `INSERT INTO ${SCHEMA}.report_alpha VALUES ('2026-01-01','2026-01-01','2026-01-01',7,0,0,0,0,0,1,now())`,
  );
  writeJob('alpha', '[day, zone_id]');
  const changed = await migrate();
  expect(changed.code).toBe(0);
  expect(changed.stdout).toContain(`started: alpha loads version 2 (${SCHEMA}.report_alpha__v2)`);
  expect(changed.stdout).toContain(`created ${SCHEMA}.report_alpha__v2`);
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM ${SCHEMA}.report_alpha) AS old, (SELECT count(*)::int FROM ${SCHEMA}.report_alpha__v2) AS new`,
  );
  expect(rows).toEqual([{ old: 1, new: 0 }]);
  writeJob('alpha', '[day, campaign_id]');
  // Back to the serving shape: the new version is retired, nothing is dropped.
  const back = await migrate();
  expect(back.code).toBe(0);
  const versions = await db.pool.query(
    `SELECT version, state FROM ${SCHEMA}.report_versions WHERE report = 'alpha' ORDER BY version`,
  );
  expect(versions.rows).toEqual([
    { version: 1, state: 'serving' },
    { version: 2, state: 'retired' },
  ]);
});

it('an unreachable database is exit 1 with a message naming DATABASE_URL', async () => {
  const down = await migrate('postgres://root@127.0.0.1:1/nothing');
  expect(down.code).toBe(1);
  expect(down.stderr).toMatch(/cannot connect to Postgres .*DATABASE_URL/);
});
