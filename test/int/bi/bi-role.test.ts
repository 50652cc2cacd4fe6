// `adops migrate --bi-role NAME`: the role reads the bi_ views, dim_date and the catalogue, and
// nothing else: not report_raw, not a report table, and it cannot write or create anything.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { runCli } from '../../helpers/run-cli.js';

const S = TEST_SCHEMA;
// Roles are cluster-wide: a name of this run's own, dropped after the database that uses it.
const ROLE = `adops_bi_${randomBytes(4).toString('hex')}`;
/** Roles that can write or read more than the grant, through a membership; dropped with ROLE. */
const WRITER = `${ROLE}_writer`;
const READER = `${ROLE}_reader`;
const VIA = `${ROLE}_via`;
const LOADER = `${ROLE}_loader`;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  for (const role of [ROLE, WRITER, READER, VIA, LOADER]) await admin.query(`DROP ROLE IF EXISTS ${role}`);
  await admin.end();
});

function migrate(...args: string[]) {
  return runCli(['migrate', ...args], {
    DATABASE_URL: db.url,
    ADOPS_SCHEMA: S,
    ADOPS_JOBS_DIR: 'jobs',
    LOG_LEVEL: 'silent',
  });
}

/** Runs `sql` as the BI role; resolves to the SQLSTATE of its error, or 'ok'. */
async function asRole(sql: string): Promise<string> {
  const client = await db.pool.connect();
  try {
    await client.query(`SET ROLE ${ROLE}`);
    await client.query(sql);
    return 'ok';
  } catch (error) {
    return error instanceof pg.DatabaseError ? (error.code ?? 'unknown') : String(error);
  } finally {
    await client.query('RESET ROLE');
    client.release();
  }
}

describe('adops migrate --bi-role', () => {
  it('creates the role and grants it exactly what dashboards read', async () => {
    const run = await migrate('--bi-role', ROLE);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`created role ${ROLE} (NOLOGIN)`);
    expect(run.stdout).toMatch(new RegExp(`granted ${ROLE} read-only access to ${S}: .*bi_daily_campaign`));
    for (const relation of ['bi_daily_campaign', 'bi_hourly_daily', 'dim_date', 'campaigns', 'creatives'])
      expect(await asRole(`SELECT * FROM ${S}.${relation} LIMIT 1`), relation).toBe('ok');
    // 42501: insufficient privilege.
    for (const relation of ['report_raw', 'report_raw_parts', 'report_daily_campaign', 'report_loads'])
      expect(await asRole(`SELECT * FROM ${S}.${relation} LIMIT 1`), relation).toBe('42501');
    expect(await asRole(`INSERT INTO ${S}.dim_date SELECT * FROM ${S}.dim_date LIMIT 1`)).toBe('42501');
    expect(await asRole(`DELETE FROM ${S}.campaigns`)).toBe('42501');
    expect(await asRole(`UPDATE ${S}.creatives SET name = 'x'`)).toBe('42501');
    expect(await asRole(`CREATE TABLE ${S}.mine (x int)`)).toBe('42501');
  });

  it('takes away a write privilege granted earlier, and is idempotent', async () => {
    await db.pool.query(`GRANT INSERT, SELECT ON ${S}.report_raw TO ${ROLE}`);
    const run = await migrate('--bi-role', ROLE);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('created role');
    expect(await asRole(`SELECT * FROM ${S}.report_raw LIMIT 1`)).toBe('42501');
  });

  it('keeps reading a bi_ view dropped and made again (an evolution swap does that)', async () => {
    await db.pool.query(`DROP VIEW ${S}.bi_daily_zone_daily`);
    await db.pool.query(`DROP VIEW ${S}.bi_daily_zone`);
    // adops migrate makes them again, as swapVersion does after an evolution's swap.
    expect((await migrate()).code).toBe(0);
    expect(await asRole(`SELECT * FROM ${S}.bi_daily_zone_daily LIMIT 1`)).toBe('ok');
  });

  it('refuses a superuser and a name that is not a plain identifier', async () => {
    const { rows } = await db.pool.query<{ user: string }>('SELECT current_user AS user');
    const superuser = await migrate('--bi-role', rows[0]?.user ?? 'root');
    expect(superuser.code).toBe(1);
    expect(superuser.stderr).toContain('superuser');
    const bad = await migrate('--bi-role', 'Robert"); DROP TABLE x; --');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a role name');
  });

  it('refuses a role that can write or read beyond the grant through a membership, naming it', async () => {
    await db.pool.query(`CREATE ROLE ${WRITER} NOLOGIN IN ROLE pg_write_all_data`);
    await db.pool.query(`CREATE ROLE ${READER} NOLOGIN IN ROLE pg_read_all_data`);
    // LOADER may insert into report_loads; VIA holds LOADER without inheriting it, but may SET ROLE to it.
    await db.pool.query(`CREATE ROLE ${LOADER} NOLOGIN`);
    await db.pool.query(`GRANT INSERT ON ${S}.report_loads TO ${LOADER}`);
    await db.pool.query(`CREATE ROLE ${VIA} NOLOGIN NOINHERIT IN ROLE ${LOADER}`);
    const cases: [string, RegExp][] = [
      [WRITER, /member of pg_write_all_data.*can (insert|update|delete)/],
      [READER, /member of pg_read_all_data.*can read report_/],
      [VIA, new RegExp(`member of ${LOADER}.*can insert report_loads`)],
    ];
    for (const [role, why] of cases) {
      const run = await migrate('--bi-role', role);
      expect(run.code, role).toBe(1);
      expect(run.stdout, role).not.toContain('read-only access');
      expect(run.stderr.trim().split('\n'), role).toHaveLength(1);
      expect(run.stderr, role).toMatch(new RegExp(`^adops: --bi-role ${role}: `));
      expect(run.stderr, role).toMatch(why);
    }
    // Nothing was granted to a refused role.
    const { rows } = await db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${S}.dashboard_roles WHERE role = ANY($1)`,
      [[WRITER, READER, VIA]],
    );
    expect(rows[0]?.n).toBe('0');
  });

  it('refuses while PUBLIC can read report_raw, and says to revoke it', async () => {
    await db.pool.query(`GRANT SELECT ON ${S}.report_raw TO PUBLIC`);
    const run = await migrate('--bi-role', ROLE);
    await db.pool.query(`REVOKE SELECT ON ${S}.report_raw FROM PUBLIC`);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `adops: --bi-role ${ROLE}: PUBLIC (every role) can read report_raw: revoke that from PUBLIC, then run this again\n`,
    );
    expect((await migrate('--bi-role', ROLE)).code).toBe(0);
  });

  it('refuses public, none and Postgres predefined roles in one line, before connecting', async () => {
    for (const role of ['public', 'none', 'pg_write_all_data', 'pg_read_all_data', 'current_user']) {
      const run = await migrate('--bi-role', role);
      expect(run.code, role).toBe(2);
      expect(run.stderr.trim().split('\n'), role).toHaveLength(1);
      expect(run.stderr, role).toContain(`--bi-role ${role}: `);
      expect(run.stderr, role).not.toMatch(/\n\s+at /);
    }
  });
});
