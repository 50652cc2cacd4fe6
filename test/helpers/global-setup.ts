// Once per test run: a run id, and a migrated template database that each test file clones.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { loadJobs } from '../../src/platform/config/jobs.js';
import { setupWarehouse } from '../../src/schema/migrate.js';
import { databaseUrl, PG_ADMIN_URL, REDIS_URL } from './services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    runId: string;
    templateDb: string;
  }
}

import { TEST_SCHEMA } from './schema.js';
import { warehouseOf } from '../../src/platform/pg/handle.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = `adops_t_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const templateDb = `${runId}_tpl`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(templateDb)}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: databaseUrl(templateDb), max: 2 });
  try {
    const jobs = loadJobs('jobs');
    // Exactly what `adops migrate` does: numbered files, report tables, BI views.
    await setupWarehouse(warehouseOf(pool, TEST_SCHEMA), { reports: jobs.reports });
  } finally {
    await pool.end();
  }
  project.provide('runId', runId);
  project.provide('templateDb', templateDb);

  return async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    const { rows } = await c.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname LIKE $1',
      [`${runId}%`],
    );
    for (const { datname } of rows)
      await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
    await c.end();
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${runId}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
  };
}
