// Monthly range partitions of report tables, by period_start: a period's rows live in the partition
// of its first day, so a load's DELETE and COPY touch that one partition only. Partitions are made
// as plain tables and then attached: ATTACH takes a SHARE UPDATE EXCLUSIVE lock on the parent,
// which neither loads nor BI readers wait on (CREATE TABLE ... PARTITION OF would block both).
import type { ClientBase, Pool } from 'pg';
import { addDays } from '../dates/calendar.js';
import { addMonths, monthStart } from '../plan/retention.js';
import { withClient, ident, qualified, reportTable, withTransaction } from './pg.js';

/** Months made ahead of the current one by `adops migrate` and each scheduler tick. */
export const PARTITION_MONTHS_AHEAD = 2;

/** The clause that makes a report table partitioned (createTableSql). */
export const PARTITION_CLAUSE = 'PARTITION BY RANGE (period_start)';

const MONTH = /^\d{4}-\d{2}-01$/;

/** The partition of `table` holding the month starting `month` (YYYY-MM-01): <table>__p<YYYYMM>. */
export function partitionName(table: string, month: string): string {
  if (!MONTH.test(month)) throw new Error(`not the first day of a month: ${JSON.stringify(month)}`);
  const name = `${table}__p${month.slice(0, 4)}${month.slice(5, 7)}`;
  // Postgres would cut a longer name to 63 bytes, and two months could then share one.
  if (name.length > 63)
    throw new Error(
      `the partition name ${name} is longer than Postgres' 63 bytes: shorten the report's name`,
    );
  return name;
}

/** The months (first days) from the month of `from` to that of `to`, both included. */
export function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let m = monthStart(from); m <= monthStart(to); m = addMonths(m, 1)) out.push(m);
  return out;
}

/** One partition as found. */
export interface FoundPartition {
  readonly name: string;
  /** Its first day (YYYY-MM-DD), read from its bounds. */
  readonly from: string;
  /** The day after its last (its bound's TO). */
  readonly to: string;
  /** Left half-detached by an interrupted DETACH ... CONCURRENTLY. */
  readonly detachPending: boolean;
}

/** True when `table` is a partitioned table (relkind 'p'). */
export async function isPartitioned(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  table: string,
): Promise<boolean> {
  const { rows } = await db.query<{ kind: string }>(
    `SELECT c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2`,
    [schema, table],
  );
  return rows[0]?.kind === 'p';
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

/**
 * Attaches a partition for each month of `months` that `table` lacks, inside the caller's
 * transaction, serialized per table by an advisory lock: two loads of one new month make it once.
 * Returns the partitions made.
 */
export async function attachMonths(
  client: ClientBase,
  schema: string,
  table: string,
  months: readonly string[],
): Promise<string[]> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`adops-partition:${schema}.${table}`]);
  const have = new Set((await partitionsOf(client, schema, table)).map((p) => p.from));
  const byDay = await hasDayColumn(client, schema, table);
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
          `CHECK (day >= '${month}' AND day < '${dayBound(month)}')`,
      );
    await client.query(
      `ALTER TABLE ${qualified(schema, table)} ATTACH PARTITION ${qualified(schema, name)} ` +
        `FOR VALUES FROM ('${month}') TO ('${addMonths(month, 1)}')`,
    );
    made.push(name);
  }
  return made;
}

/**
 * The CHECK each partition of a table with a `day` column carries: its rows' days. The BI views
 * filter on `day`, not on the partition key, and Postgres skips a partition whose CHECK rules the
 * filter out (constraint_exclusion = partition, its default), so a month's BI query reads its
 * month's partition and, at most, the one before. The loader already refuses a row dated outside
 * its period, so no load ever meets this CHECK.
 */
export const DAY_CHECK = 'day_in_partition';

/**
 * The day after the last a partition starting `month` may hold: a period starts in the month, and
 * a week that starts on its last day ends six days into the next one.
 */
export function dayBound(month: string): string {
  return addDays(addMonths(month, 1), 6);
}

async function hasDayColumn(client: ClientBase, schema: string, table: string): Promise<boolean> {
  const { rows } = await client.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(quote_ident($1) || '.' || quote_ident($2))
                      AND attname = 'day' AND NOT attisdropped) AS found`,
    [schema, table],
  );
  return rows[0]?.found === true;
}

/** attachMonths in a transaction of its own; a no-op for a table that is not partitioned. */
export async function ensurePartitions(
  client: ClientBase,
  schema: string,
  table: string,
  months: readonly string[],
): Promise<string[]> {
  if (months.length === 0 || !(await isPartitioned(client, schema, table))) return [];
  return withTransaction(client, () => attachMonths(client, schema, table, months));
}

/** The current month and PARTITION_MONTHS_AHEAD after it, as of `now` (UTC). */
export function monthsAhead(now: Date): string[] {
  const current = monthStart(now.toISOString().slice(0, 10));
  return Array.from({ length: PARTITION_MONTHS_AHEAD + 1 }, (_, i) => addMonths(current, i));
}

/** Months this process knows to have their partitions, per schema, report and month. */
const known = new Set<string>();

/**
 * Makes sure every live table of `report` (its serving and building versions) has the partition
 * of the month of `day`, before a load of a period starting that day. Remembered per process, so
 * a load pays a query only for its report's first period of a month.
 */
export async function ensureLoadPartition(
  pool: Pool,
  schema: string,
  report: string,
  day: string,
): Promise<void> {
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
  const e = error as { code?: unknown; message?: unknown };
  return (
    e.code === '23514' && typeof e.message === 'string' && e.message.startsWith('no partition of relation')
  );
}

/** The tables `report`'s loads may write: its serving and building versions, or report_<name>. */
export async function liveTables(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  report: string,
): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND state <> 'retired'`,
    [report],
  );
  return rows.length > 0 ? rows.map((r) => r.table_name) : [reportTable(report)];
}
