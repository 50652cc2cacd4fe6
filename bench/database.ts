// Fresh databases for one bench run: created from nothing, migrated the way `adops migrate` does,
// and dropped at the end so a run never leaves data behind.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Config } from '../src/platform/config/env.js';
import type { ReportJob } from '../src/platform/config/jobs.js';
import { sqlDir } from '../src/platform/config/files.js';
import { migrateQueueSchema } from '../src/platform/queue/backend.js';
import { migrate } from '../src/schema/migrate.js';
import { monthStart } from '../src/plan/retention.js';
import { ensurePartitions } from '../src/schema/partitions.js';
import { ensureReportTables } from '../src/schema/report-tables.js';
import { reportTable, warehouseOf } from '../src/platform/pg/handle.js';
import { onInterrupt } from './cleanup.js';

/** The schema every bench database uses. */
export const BENCH_SCHEMA = 'bench';

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  /** Closes nothing of the caller's: terminates sessions and drops the database. */
  drop(): Promise<void>;
}

/** The URL of database `name` on the admin URL's server. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Creates an empty database `adops_bench_<label>_<random>`, migrates it and creates the reports'
 * tables, with the monthly partitions of the days in `days` (for rows written by other means than
 * our loader, which makes its own).
 */
export async function createBenchDatabase(
  adminUrl: string,
  label: string,
  reports: readonly ReportJob[],
  days: readonly string[] = [],
): Promise<BenchDatabase> {
  const name = `adops_bench_${label}_${randomBytes(4).toString('hex')}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  const url = databaseUrl(adminUrl, name);
  const dropNow = () =>
    admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`)).then(
      () => undefined,
    );
  const forget = onInterrupt(dropNow);
  const db: BenchDatabase = {
    name,
    url,
    drop: async () => {
      await dropNow();
      forget();
    },
  };
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await migrate(pool, {
      schema: BENCH_SCHEMA,
      sqlDir: sqlDir(),
      afterMigrations: async (client) => {
        const wh = warehouseOf(pool, BENCH_SCHEMA);
        await ensureReportTables(client, wh, reports);
        for (const r of reports)
          await ensurePartitions(client, wh, reportTable(r.name), days.map(monthStart));
      },
    });
  } catch (error) {
    await pool.end();
    await db.drop();
    throw error;
  }
  await pool.end();
  return db;
}

/**
 * Brings `config`'s queue schema up to BullMQ's latest in the bench database at `url`, as `adops
 * migrate` does: a no-op unless the queues are on Postgres. The schema goes with the database.
 */
export async function migrateBenchQueues(url: string, config: Pick<Config, 'queue'>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await migrateQueueSchema(c, config);
  } finally {
    await c.end();
  }
}

/** A report definition for the bench (the same shape jobs/*.yaml gives). */
export function benchReport(name: string, dimensions: ReportJob['dimensions']): ReportJob {
  return Object.freeze({
    kind: 'report',
    name,
    dimensions,
    period: 'day',
    lookbackDays: 0,
    schedule: undefined,
    file: '(bench)',
  });
}
