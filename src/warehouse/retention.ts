// Partition upkeep, run by `adops migrate` and each scheduler tick: every live table of a report
// gets its partitions for the current month and the next ones, and a report with retention_months
// loses its partitions whose every day is older, dropped whole (never a DELETE of rows). The
// periods they held are marked in report_totals and report_loads (sql/011_retention_marks.sql).
import type { ClientBase } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { retentionBoundary } from '../plan/retention.js';
import { ensurePartitions, isPartitioned, liveTables, monthsAhead, partitionsOf } from './partitions.js';
import { qualified } from './sql.js';
import { withTransaction } from './transaction.js';

/** A partition retention dropped. */
export interface DroppedPartition {
  readonly report: string;
  readonly partition: string;
  /** Its first day, and the day after its last. */
  readonly from: string;
  readonly to: string;
}

export interface PartitionUpkeep {
  /** Partitions attached ahead of need. */
  readonly made: readonly string[];
  readonly dropped: readonly DroppedPartition[];
  /** Periods newly marked as dropped by retention. */
  readonly marked: number;
}

/**
 * Makes the partitions ahead and applies retention for each of `reports`, as of `now`. `client`
 * must not be inside a transaction: a partition is detached CONCURRENTLY, so neither loads nor BI
 * readers of the other partitions wait for the drop.
 */
export async function maintainPartitions(
  client: ClientBase,
  schema: string,
  reports: readonly Pick<ReportJob, 'name' | 'retentionMonths'>[],
  now: Date = new Date(),
): Promise<PartitionUpkeep> {
  const made: string[] = [];
  const dropped: DroppedPartition[] = [];
  let marked = 0;
  for (const report of reports) {
    const tables = await liveTables(client, schema, report.name);
    for (const table of tables)
      made.push(...(await ensurePartitions(client, schema, table, monthsAhead(now))));
    const boundary = retentionBoundary(report, now);
    if (boundary === undefined) continue;
    const result = await applyRetention(client, schema, report.name, tables, boundary);
    dropped.push(...result.dropped);
    marked += result.marked;
  }
  return { made, dropped, marked };
}

/**
 * Drops the partitions of `tables` that end on or before `boundary`, then marks the report's
 * periods starting before it. One process at a time per report (a session advisory lock, tried:
 * a second one skips, the first does the work).
 */
async function applyRetention(
  client: ClientBase,
  schema: string,
  report: string,
  tables: readonly string[],
  boundary: string,
): Promise<{ dropped: DroppedPartition[]; marked: number }> {
  const key = `adops-retention:${schema}.${report}`;
  const { rows } = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
    [key],
  );
  if (rows[0]?.locked !== true) return { dropped: [], marked: 0 };
  try {
    // A table not converted yet (adops migrate converts it) holds rows of every age: nothing of
    // the report is dropped or marked until all of its tables are partitioned.
    for (const table of tables)
      if (!(await isPartitioned(client, schema, table))) return { dropped: [], marked: 0 };
    const dropped: DroppedPartition[] = [];
    for (const table of tables) {
      for (const p of await partitionsOf(client, schema, table)) {
        if (p.to > boundary) continue;
        // DETACH CONCURRENTLY waits out the queries that use the partition, blocking nobody; one
        // interrupted half-way leaves it pending, which FINALIZE completes.
        await client.query(
          `ALTER TABLE ${qualified(schema, table)} DETACH PARTITION ${qualified(schema, p.name)} ` +
            (p.detachPending ? 'FINALIZE' : 'CONCURRENTLY'),
        );
        await client.query(`DROP TABLE ${qualified(schema, p.name)}`);
        dropped.push({ report, partition: p.name, from: p.from, to: p.to });
      }
    }
    const marked = await markDropped(client, schema, report, boundary);
    return { dropped, marked };
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
  }
}

/**
 * Marks the periods of `report` starting before `boundary` as dropped by retention: their
 * report_totals row, and the report_loads rows of each newly marked period. Returns how many
 * periods were newly marked.
 */
async function markDropped(
  client: ClientBase,
  schema: string,
  report: string,
  boundary: string,
): Promise<number> {
  return withTransaction(client, async () => {
    const { rows } = await client.query<{ periods: number }>(
      `WITH t AS (
         UPDATE ${qualified(schema, 'report_totals')} SET retention_dropped_at = now()
          WHERE report = $1 AND period_start < $2::date AND retention_dropped_at IS NULL
          RETURNING period_start, period_end),
       l AS (
         UPDATE ${qualified(schema, 'report_loads')} l SET retention_dropped_at = now()
           FROM t WHERE l.report = $1 AND l.period_start = t.period_start AND l.period_end = t.period_end
            AND l.retention_dropped_at IS NULL)
       SELECT count(*)::int AS periods FROM t`,
      [report, boundary],
    );
    return rows[0]?.periods ?? 0;
  });
}
