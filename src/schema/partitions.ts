// Monthly range partitions of report tables, by period_start: a period's rows live in the partition
// of its first day, so a load's DELETE and COPY touch that one partition only. Partitions are made
// as plain tables and then attached: ATTACH takes a SHARE UPDATE EXCLUSIVE lock on the parent,
// which neither loads nor BI readers wait on (CREATE TABLE ... PARTITION OF would block both).
import type { ClientBase, Pool } from 'pg';
import { addDays } from '../platform/dates/calendar.js';
import { addMonths, monthStart, retentionBoundary } from '../plan/retention.js';
import {
  derivedName,
  ident,
  qualified,
  sqlState,
  withClient,
  withTransaction,
  type Warehouse,
} from '../platform/pg/handle.js';
import type { ReportJob } from '../platform/config/jobs.js';
import { columnsOf } from './views.js';

const MONTH = /^\d{4}-\d{2}-01$/;

/** The partition of `table` holding the month starting `month` (YYYY-MM-01): <table>__p<YYYYMM>,
 * shortened by derivedName past 63 bytes (Postgres would cut it, and two months could then share one). */
export function partitionName(table: string, month: string): string {
  if (!MONTH.test(month)) throw new Error(`not the first day of a month: ${JSON.stringify(month)}`);
  return derivedName(`${table}__p${month.slice(0, 4)}${month.slice(5, 7)}`);
}

/** What a monthly partition of a report table is, as its comment says. Pure. */
export function partitionDescription(table: string, month: string): string {
  return `The rows of ${table} whose period_start falls in the month of ${month} (a partition): read ${table}, not this.`;
}

/** One partition as found: its first day, the day after its last, and whether an interrupted
 * DETACH ... CONCURRENTLY left it half-detached. */
export interface FoundPartition {
  readonly name: string;
  readonly from: string;
  readonly to: string;
  readonly detachPending: boolean;
}

/** The range partitions of `table`, oldest first (none for a table that is missing or not partitioned). */
export async function partitionsOf(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  table: string,
): Promise<FoundPartition[]> {
  const { rows } = await db.query<{ name: string; bound: string; pending: boolean }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, i.inhdetachpending AS pending
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass(quote_ident($1) || '.' || quote_ident($2))`,
    [schema, table],
  );
  const out: FoundPartition[] = [];
  for (const r of rows) {
    const m = /FROM \('(\d{4}-\d{2}-\d{2})'\) TO \('(\d{4}-\d{2}-\d{2})'\)/.exec(r.bound);
    if (m === null) continue;
    out.push({ name: r.name, from: m[1] as string, to: m[2] as string, detachPending: r.pending });
  }
  return out.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/** Attaches the partitions of `months` that `table` lacks (a transaction of its own, locked per
 * table so two loads of one new month make it once); returns those made. */
export async function ensurePartitions(
  client: ClientBase,
  schema: string,
  table: string,
  months: readonly string[],
): Promise<string[]> {
  if (months.length === 0) return [];
  return withTransaction(client, async () => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`adops-partition:${schema}.${table}`]);
    const have = new Set((await partitionsOf(client, schema, table)).map((p) => p.from));
    const byDay = (await columnsOf(client, schema, table)).some((c) => c.name === 'day');
    const made: string[] = [];
    for (const month of [...new Set(months)].sort()) {
      if (have.has(month)) continue;
      const name = partitionName(table, month);
      // LIKE copies the columns in order with their NOT NULLs and defaults; ATTACH adds the indexes.
      await client.query(
        `CREATE TABLE ${qualified(schema, name)} (LIKE ${qualified(schema, table)} INCLUDING DEFAULTS)`,
      );
      if (byDay)
        await client.query(
          `ALTER TABLE ${qualified(schema, name)} ADD CONSTRAINT ${ident(DAY_CHECK)} ` +
            // A period starts in the month; a week starting on its last day ends six days later.
            `CHECK (day >= '${month}' AND day < '${addDays(addMonths(month, 1), 6)}')`,
        );
      await client.query(
        `ALTER TABLE ${qualified(schema, table)} ATTACH PARTITION ${qualified(schema, name)} ` +
          `FOR VALUES FROM ('${month}') TO ('${addMonths(month, 1)}')`,
      );
      await client.query(
        `COMMENT ON TABLE ${qualified(schema, name)} IS ${client.escapeLiteral(partitionDescription(table, month))}`,
      );
      made.push(name);
    }
    return made;
  });
}

/** The CHECK on a partition's `day`: BI views filter on `day`, not the partition key, and this lets
 * constraint exclusion skip other months' partitions. The loader refuses rows outside their period,
 * so no load ever meets it. */
export const DAY_CHECK = 'day_in_partition';

/** The current month and the two after it, as of `now` (UTC): what migrate and each tick make. */
export function monthsAhead(now: Date): string[] {
  const current = monthStart(now.toISOString().slice(0, 10));
  return [0, 1, 2].map((i) => addMonths(current, i));
}

/** Months this process knows to have their partitions, per schema, report and month. */
const known = new Set<string>();

/** Makes the month of `day`'s partition of each live table of `report`, remembered per process. */
export async function ensureLoadPartition(wh: Warehouse, report: string, day: string): Promise<void> {
  const { pool, schema } = wh;
  const month = monthStart(day);
  const key = `${schema}\u0000${report}\u0000${month}`;
  if (known.has(key)) return;
  await withClient(pool, async (client) => {
    for (const table of await liveTables(client, schema, report))
      await ensurePartitions(client, schema, table, [month]);
  });
  known.add(key);
}

/** Forgets what ensureLoadPartition remembers of `report` (a new version may lack partitions). */
export function forgetLoadPartitions(schema: string, report: string): void {
  const prefix = `${schema}\u0000${report}\u0000`;
  for (const key of known) if (key.startsWith(prefix)) known.delete(key);
}

/** True for Postgres' error of a row no partition takes (a month whose partition is missing). */
export function isMissingPartition(error: unknown): boolean {
  return (
    sqlState(error) === '23514' &&
    error instanceof Error &&
    error.message.startsWith('no partition of relation')
  );
}

/** The tables `report`'s loads may write: its serving and building versions. */
async function liveTables(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  report: string,
): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND state <> 'retired'`,
    [report],
  );
  return rows.map((r) => r.table_name);
}

/** A partition retention dropped whole (never a DELETE of rows): its first day, and the day after its last. */
export interface DroppedPartition {
  readonly report: string;
  readonly partition: string;
  readonly from: string;
  readonly to: string;
}

/** Partitions attached ahead of need, those retention dropped, and the periods it newly marked. */
export interface PartitionUpkeep {
  readonly made: readonly string[];
  readonly dropped: readonly DroppedPartition[];
  readonly marked: number;
}

/**
 * Partition upkeep (migrate and each tick): makes partitions ahead and applies retention, as of
 * `clock` (default the database's now()); the database's clock must agree before a month goes
 * (keptByDatabase). `client` must not be in a transaction: DETACH CONCURRENTLY blocks nobody.
 */
export async function maintainPartitions(
  client: ClientBase,
  schema: string,
  reports: readonly Pick<ReportJob, 'name' | 'retentionMonths'>[],
  clock?: Date,
): Promise<PartitionUpkeep> {
  const now = clock ?? (await client.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now;
  const made: string[] = [];
  const dropped: DroppedPartition[] = [];
  let marked = 0;
  for (const report of reports) {
    const tables = await liveTables(client, schema, report.name);
    for (const table of tables)
      made.push(...(await ensurePartitions(client, schema, table, monthsAhead(now))));
    const boundary = retentionBoundary(report, now);
    if (boundary === undefined) continue;
    const months = report.retentionMonths as number;
    const result = await applyRetention(client, schema, report.name, tables, boundary, months);
    dropped.push(...result.dropped);
    marked += result.marked;
  }
  return { made, dropped, marked };
}

/** Drops the partitions of `tables` ending by `boundary` unless keptByDatabase, then marks the
 * dropped periods; one process per report at a time (a second one skips). */
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

/** Whether month `p` stays though past the caller's boundary: by the database's clock it is not
 * past `months`, or it holds a load recorded less than `months` months ago (not history yet). */
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

/** Marks `report`'s periods before both boundaries, outside the `kept` months, as dropped by
 * retention in report_totals and report_loads; returns how many were newly marked. */
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
