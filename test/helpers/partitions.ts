// Report tables are partitioned by month: a test that writes rows itself, rather than through the
// loader (which makes its month's partition), makes the partition first.
import type pg from 'pg';
import { addMonths, monthStart } from '../../src/plan/retention.js';
import { ensurePartitions } from '../../src/schema/partitions.js';
import { warehouseOf } from '../../src/platform/pg/handle.js';

/** Makes the partition of `table` holding `day` (YYYY-MM-DD), if the table is partitioned. */
export async function partitionFor(pool: pg.Pool, schema: string, table: string, day: string): Promise<void> {
  const client = await pool.connect();
  try {
    await ensurePartitions(client, warehouseOf(pool, schema), table, [monthStart(day)]);
  } finally {
    client.release();
  }
}

/** The months (first days) from the month of `from` to that of `to`, both included. */
export function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let m = monthStart(from); m <= monthStart(to); m = addMonths(m, 1)) out.push(m);
  return out;
}
