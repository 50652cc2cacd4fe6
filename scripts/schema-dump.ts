// The schema of a freshly migrated database as `pg_dump --schema-only`, normalized so that it
// only changes when the schema does. `npm run db:dump` writes it to test/schema.sql; the schema
// test compares a new dump with that file, so drift fails the build.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadJobs } from '../src/platform/config/jobs.js';
import { setupWarehouse } from '../src/schema/migrate.js';
import { warehouseOf } from '../src/platform/pg/handle.js';

export const SCHEMA_FILE = 'test/schema.sql';

/** The instant the dumped warehouse is migrated at (its monthly partitions follow it). */
const DUMP_CLOCK = new Date('2026-01-15T00:00:00Z');

/** pg_dump of `schema` in the database at `url`, without comments, SETs and blank lines. */
export function dumpSchema(url: string, schema: string): string {
  const text = execFileSync(
    'pg_dump',
    ['--schema-only', '--no-owner', '--no-privileges', `--schema=${schema}`, url],
    {
      encoding: 'utf8',
    },
  );
  return (
    text
      .split('\n')
      // pg_dump 15.14+ also wraps the dump in \restrict with a random key: not part of the schema.
      .filter(
        (line) =>
          line.trim() !== '' &&
          !line.startsWith('--') &&
          !/^SET |^SELECT pg_catalog\.set_config|^\\(un)?restrict /.test(line),
      )
      .join('\n') + '\n'
  );
}

/** Migrates an empty database at `url` as `adops migrate` would, then dumps it. */
export async function migratedSchema(url: string, schema: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    // A fixed clock: the partitions made ahead are those of its month, not of the day of the dump.
    await setupWarehouse(warehouseOf(pool, schema), { reports: loadJobs('jobs').reports, now: DUMP_CLOCK });
  } finally {
    await pool.end();
  }
  return dumpSchema(url, schema);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const admin = process.env.ADOPS_TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
  const name = `adops_dump_${process.pid}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  try {
    const url = new URL(admin);
    url.pathname = `/${name}`;
    writeFileSync(SCHEMA_FILE, await migratedSchema(url.toString(), 'adops'));
    console.log(`wrote ${SCHEMA_FILE}`);
  } finally {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await client.end();
  }
}
