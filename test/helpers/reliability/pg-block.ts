// Holding a loader while it writes a period's rows, from outside: an uncommitted row with the same
// key as one the loader will write makes Postgres' unique check wait for our transaction, so the
// loader's backend sits inside its rows' statement (a small period's INSERT in the load's last
// statement, or a big one's COPY) until we release it. No hook in the product code is needed.
import pg from 'pg';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { type Period } from '../../../src/flatten/types.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';
import { monthStart } from '../../../src/plan/retention.js';
import { ensurePartitions } from '../../../src/schema/partitions.js';
import { ident, qualified, reportTable } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA } from '../schema.js';
import { until } from './child.js';
import type { Truth } from './truth.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

export interface RowsBlock {
  /** The pid of the loader's backend once it waits on our row while writing its rows. */
  blockedBackend(timeoutMs?: number): Promise<number>;
  /** Rolls our row back (the loader's statement may continue) and closes the connection. */
  release(): Promise<void>;
}

/** Takes the key of the truth's first row of `period` in an open transaction. */
export async function blockRows(
  databaseUrl: string,
  report: ReportJob,
  period: Period,
  truth: Truth,
): Promise<RowsBlock> {
  const first = truth.get(report.name)?.get(period.start)?.rows[0];
  if (first === undefined) throw new Error(`no truth rows for ${report.name} ${period.start}`);
  const dims = (first.split('|')[0] ?? '').split(',');
  const client = new pg.Client({ connectionString: databaseUrl });
  // Dropping the database at the end terminates this connection too: that is not an error here.
  client.on('error', () => undefined);
  await client.connect();
  // Report tables are partitioned by month: our row needs its month's partition, as the loader's do.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  await ensurePartitions(client, warehouseOf(pool, TEST_SCHEMA), reportTable(report.name), [
    monthStart(period.start),
  ]);
  await pool.end();
  await client.query('BEGIN');
  const cols = ['period_start', 'period_end', ...report.dimensions, ...COUNTERS, 'load_id'];
  const values = [period.start, period.end, ...dims, ...COUNTERS.map(() => 0), 0];
  await client.query(
    `INSERT INTO ${qualified(TEST_SCHEMA, reportTable(report.name))} (${cols.map(ident).join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
  const database = new URL(databaseUrl).pathname.slice(1);
  return {
    blockedBackend: (timeoutMs = 30_000) =>
      until(
        'a loader backend waiting on our row while writing its rows',
        async () => {
          // Inside our transaction the activity view is a cached snapshot: refresh it each time.
          await client.query('SELECT pg_stat_clear_snapshot()');
          const { rows } = await client.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
              WHERE datname = $1 AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND wait_event = 'transactionid'`,
            [database],
          );
          return rows[0]?.pid;
        },
        timeoutMs,
      ),
    release: async () => {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}
