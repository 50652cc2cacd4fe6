// Partition upkeep, run by `adops migrate` and each scheduler tick: every live table of a report
// gets its partitions for the current month and the next ones, and a report with retention_months
// loses its partitions whose every day is older, dropped whole (never a DELETE of rows). The
// periods they held are marked in report_totals and report_loads (their retention_dropped_at).
// "Now" is the database's clock, never this machine's: a worker or a laptop whose clock runs ahead
// would otherwise drop months that retention still keeps.
import type { ClientBase } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { retentionBoundary } from '../plan/retention.js';
import { ensurePartitions, liveTables, monthsAhead, partitionsOf } from './partitions.js';
import { qualified, withTransaction } from './pg.js';

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
 * The database's clock: `now()`, an instant, which the callers read as a UTC date (the months of
 * retention and partitions are UTC months, as retentionBoundary and monthsAhead take them).
 */
export async function databaseNow(db: Pick<ClientBase, 'query'>): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>('SELECT now() AS now');
  const now = rows[0]?.now;
  if (!(now instanceof Date)) throw new Error('SELECT now() returned no time');
  return now;
}

/**
 * Makes the partitions ahead and applies retention for each of `reports`, as of `clock`: by
 * default the database's (databaseNow); tests pass their own. Whatever `clock` says, a month is
 * dropped only once the database's clock has it past retention_months too, and never while it
 * holds a load recorded (by the database's clock) within the retention. `client` must not be
 * inside a transaction: a partition is detached CONCURRENTLY, so neither loads nor BI readers of
 * the other partitions wait for the drop.
 */
export async function maintainPartitions(
  client: ClientBase,
  schema: string,
  reports: readonly Pick<ReportJob, 'name' | 'retentionMonths'>[],
  clock?: Date,
): Promise<PartitionUpkeep> {
  const now = clock ?? (await databaseNow(client));
  const made: string[] = [];
  const dropped: DroppedPartition[] = [];
  let marked = 0;
  for (const report of reports) {
    const tables = await liveTables(client, schema, report.name);
    for (const table of tables)
      made.push(...(await ensurePartitions(client, schema, table, monthsAhead(now))));
    const boundary = retentionBoundary(report, now);
    if (boundary === undefined) continue;
    const result = await applyRetention(
      client,
      schema,
      report.name,
      tables,
      boundary,
      report.retentionMonths as number,
    );
    dropped.push(...result.dropped);
    marked += result.marked;
  }
  return { made, dropped, marked };
}

/**
 * Drops the partitions of `tables` that end on or before `boundary`, except a month the database
 * keeps (keptByDatabase: not past `months` by its clock, or holding a load younger than that), then
 * marks the report's periods starting before the boundary outside the months kept. One process at a time per report (a session advisory lock,
 * tried: a second one skips, the first does the work).
 */
async function applyRetention(
  client: ClientBase,
  schema: string,
  report: string,
  tables: readonly string[],
  boundary: string,
  months: number,
): Promise<{ dropped: DroppedPartition[]; marked: number }> {
  const key = `adops-retention:${schema}.${report}`;
  const { rows } = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
    [key],
  );
  if (rows[0]?.locked !== true) return { dropped: [], marked: 0 };
  try {
    const dropped: DroppedPartition[] = [];
    // Months past the boundary, and whether the database keeps each (keptByDatabase).
    const kept = new Map<string, boolean>();
    for (const table of tables) {
      for (const p of await partitionsOf(client, schema, table)) {
        if (p.to > boundary) continue;
        let keep = kept.get(p.from);
        if (keep === undefined) {
          keep = await keptByDatabase(client, schema, report, p, months);
          kept.set(p.from, keep);
        }
        if (keep) continue;
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
    const keptMonths = [...kept].filter(([, keep]) => keep).map(([month]) => month);
    const marked = await markDropped(client, schema, report, boundary, months, keptMonths);
    return { dropped, marked };
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
  }
}

/**
 * Whether the database says month `p` of `report` must stay although the caller's boundary has
 * passed it: by the database's clock (its now(), months counted in UTC) the month is not yet past
 * retention_months (`months`), or it holds a loaded period recorded less than `months` months ago
 * (report_loads.recorded_at is the database's now() of the load). So no clock but the database's
 * can make retention drop more, and a load that young means the month is not history yet. One
 * range scan of report_loads_recorded over the loads of the last `months` months.
 */
async function keptByDatabase(
  client: ClientBase,
  schema: string,
  report: string,
  p: { readonly from: string; readonly to: string },
  months: number,
): Promise<boolean> {
  const { rows } = await client.query<{ keep: boolean }>(
    `SELECT $3::date > (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => $4::int))::date
         OR EXISTS (
              SELECT 1 FROM ${qualified(schema, 'report_loads')}
               WHERE recorded_at > ((now() AT TIME ZONE 'UTC') - make_interval(months => $4::int)) AT TIME ZONE 'UTC'
                 AND report = $1 AND status = 'loaded' AND period_start >= $2::date AND period_start < $3::date
            ) AS keep`,
    [report, p.from, p.to, months],
  );
  return rows[0]?.keep === true;
}

/**
 * Marks the periods of `report` starting before `boundary` (and before the database's own boundary
 * for `months`) as dropped by retention, except those of the `kept` months (first days): their
 * report_totals row, and the report_loads rows of each newly marked period. Returns how many
 * periods were newly marked.
 */
async function markDropped(
  client: ClientBase,
  schema: string,
  report: string,
  boundary: string,
  months: number,
  kept: readonly string[],
): Promise<number> {
  return withTransaction(client, async () => {
    const { rows } = await client.query<{ periods: number }>(
      `WITH t AS (
         UPDATE ${qualified(schema, 'report_totals')} SET retention_dropped_at = now()
          WHERE report = $1 AND period_start < $2::date AND retention_dropped_at IS NULL
            AND period_start < (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => $3::int))::date
            AND date_trunc('month', period_start)::date <> ALL ($4::date[])
          RETURNING period_start, period_end),
       l AS (
         UPDATE ${qualified(schema, 'report_loads')} l SET retention_dropped_at = now()
           FROM t WHERE l.report = $1 AND l.period_start = t.period_start AND l.period_end = t.period_end
            AND l.retention_dropped_at IS NULL)
       SELECT count(*)::int AS periods FROM t`,
      [report, boundary, months, kept],
    );
    return rows[0]?.periods ?? 0;
  });
}
