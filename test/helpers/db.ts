// A fresh database per test file, cloned from the run's migrated template; dropped after.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { databaseUrl, PG_ADMIN_URL } from './services.js';

export { TEST_SCHEMA } from './schema.js';

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  readonly pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates a database cloned from the migrated template (or empty with `{ empty: true }`). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `${inject('runId')}_${randomBytes(4).toString('hex')}`;
  const template = options.empty === true ? 'template1' : inject('templateDb');
  await admin(async (c) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await c.query(
          `CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`,
        );
        return;
      } catch (error) {
        // 55006: the template is briefly in use by a concurrent clone; try again shortly.
        if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  const url = databaseUrl(name);
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  // DROP ... WITH (FORCE) terminates connections pool.end() has not closed yet; their errors are expected.
  pool.on('error', () => undefined);
  return {
    name,
    url,
    pool,
    drop: async () => {
      await pool.end();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    },
  };
}
