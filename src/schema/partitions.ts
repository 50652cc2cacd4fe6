// Monthly range partitions of report tables, by period_start, made as plain tables and then attached:
// ATTACH's SHARE UPDATE EXCLUSIVE lock blocks neither loads nor BI readers (PARTITION OF would block both).
import type { ClientBase } from 'pg';
import { addMonths, monthStart, retentionBoundary } from '../plan/retention.js';
import type { Queryable, Warehouse } from '../platform/pg/handle.js';
import {
  derivedName,
  execute,
  firstRow,
  rowsOf,
  sqlState,
  withClient,
  withTransaction,
} from '../platform/pg/handle.js';
import type { ReportJob } from '../platform/config/jobs.js';
import * as sql from './sql.js';

const MONTH = /^\d{4}-\d{2}-01$/;

/** <table>__p<YYYYMM>, `month`'s partition, shortened by derivedName past 63 bytes, not cut by Postgres. */
export function partitionName(table: string, month: string): string {
  if (!MONTH.test(month)) throw new Error(`not the first day of a month: ${JSON.stringify(month)}`);
  return derivedName(`${table}__p${month.slice(0, 4)}${month.slice(5, 7)}`);
}

export function partitionDescription(table: string, month: string): string {
  return `The rows of ${table} whose period_start falls in the month of ${month} (a partition): read ${table}, not this.`;
}

/** One partition as found: its bounds, and whether an interrupted DETACH CONCURRENTLY left it pending. */
export interface FoundPartition {
  readonly name: string;
  readonly from: string;
  readonly to: string;
  readonly detachPending: boolean;
}

/** The range partitions of `table` (of `months` only, if given), oldest first (none for a table that is missing
 * or not partitioned). */
export async function partitionsOf(
  wh: Warehouse,
  table: string,
  db: Queryable = wh.pool,
  months?: readonly string[],
): Promise<FoundPartition[]> {
  const out: FoundPartition[] = [];
  for (const r of await rowsOf(db, sql.partitionBounds(wh.schema, table, months))) {
    const [, from, to] = /FROM \('(\d{4}-\d{2}-\d{2})'\) TO \('(\d{4}-\d{2}-\d{2})'\)/.exec(r.bound) ?? [];
    if (from !== undefined && to !== undefined)
      out.push({ name: r.name, from, to, detachPending: r.pending });
  }
  return out.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/** Attaches the partitions of `months` that `table` lacks (locked per table: one make per month). */
export async function ensurePartitions(
  client: ClientBase,
  wh: Warehouse,
  table: string,
  months: readonly string[],
): Promise<string[]> {
  const { schema } = wh;
  if (months.length === 0) return [];
  return withTransaction(client, async () => {
    await execute(client, sql.lock(`adops-partition:${schema}.${table}`));
    const have = new Set((await partitionsOf(wh, table, client, months)).map((p) => p.from));
    const byDay = (await rowsOf(client, sql.columnsOf(schema, table))).some((c) => c.name === 'day');
    const made: string[] = [];
    for (const month of [...new Set(months)].sort()) {
      if (have.has(month)) continue;
      const name = partitionName(table, month);
      for (const st of sql.makePartition(schema, table, name, month, byDay)) await execute(client, st);
      await execute(client, sql.comment('TABLE', schema, name, partitionDescription(table, month)));
      made.push(name);
    }
    return made;
  });
}

/** The current month and the two after it, as of `now` (UTC): what migrate and each tick make. */
export function monthsAhead(now: Date): string[] {
  const current = monthStart(now.toISOString().slice(0, 10));
  return [0, 1, 2].map((i) => addMonths(current, i));
}

/** Makes `day`'s month partition of each live table of `report` lacking it; one query if none does. */
export async function ensureLoadPartition(wh: Warehouse, report: string, day: string): Promise<void> {
  const month = monthStart(day);
  const lacking = (await rowsOf(wh, sql.liveTables(wh.schema, report, month))).filter(
    (t) => !t.partitions.includes(partitionName(t.table_name, month)),
  );
  if (lacking.length === 0) return;
  await withClient(wh.pool, async (client) => {
    for (const { table_name } of lacking) await ensurePartitions(client, wh, table_name, [month]);
  });
}

/** True for Postgres' error of a row no partition takes (a month whose partition is missing). */
export function isMissingPartition(error: unknown): boolean {
  return (
    sqlState(error) === '23514' &&
    error instanceof Error &&
    error.message.startsWith('no partition of relation')
  );
}

/** A partition retention dropped whole (never a DELETE of rows): its first day, and the day after its last. */
export interface DroppedPartition {
  readonly report: string;
  readonly partition: string;
  readonly from: string;
  readonly to: string;
}

export interface PartitionUpkeep {
  readonly made: readonly string[];
  readonly dropped: readonly DroppedPartition[];
  readonly marked: number;
}

/** Partition upkeep (migrate, ticks) as of `clock`; `client` outside a transaction (DETACH CONCURRENTLY). */
export async function maintainPartitions(
  client: ClientBase,
  wh: Warehouse,
  reports: readonly Pick<ReportJob, 'name' | 'retentionMonths'>[],
  clock?: Date,
): Promise<PartitionUpkeep> {
  const now = clock ?? (await firstRow(client, sql.dbNow()))?.now ?? new Date();
  const made: string[] = [];
  const dropped: DroppedPartition[] = [];
  let marked = 0;
  for (const report of reports) {
    const tables = (await rowsOf(client, sql.liveTables(wh.schema, report.name))).map((r) => r.table_name);
    for (const table of tables) made.push(...(await ensurePartitions(client, wh, table, monthsAhead(now))));
    const boundary = retentionBoundary(report, now);
    if (boundary === undefined || report.retentionMonths === undefined) continue;
    const result = await applyRetention(client, wh, report.name, tables, boundary, report.retentionMonths);
    dropped.push(...result.dropped);
    marked += result.marked;
  }
  return { made, dropped, marked };
}

/** Drops partitions of `tables` ending by `boundary` the database does not keep; one process per report. */
async function applyRetention(
  client: ClientBase,
  wh: Warehouse,
  report: string,
  tables: readonly string[],
  boundary: string,
  months: number,
): Promise<{ dropped: DroppedPartition[]; marked: number }> {
  const { schema } = wh;
  const key = `adops-retention:${schema}.${report}`;
  if ((await firstRow(client, sql.lock(key, 'try')))?.locked !== true) return { dropped: [], marked: 0 };
  try {
    const dropped: DroppedPartition[] = [];
    const kept = new Map<string, boolean>();
    for (const table of tables) {
      for (const p of await partitionsOf(wh, table, client)) {
        if (p.to > boundary) continue;
        let keep = kept.get(p.from);
        if (keep === undefined) {
          keep = (await firstRow(client, sql.keptByDatabase(schema, report, p, months)))?.keep === true;
          kept.set(p.from, keep);
        }
        if (keep) continue;
        // DETACH CONCURRENTLY blocks nobody; one interrupted is left pending, which FINALIZE completes.
        for (const st of sql.dropPartition(schema, table, p)) await execute(client, st);
        dropped.push({ report, partition: p.name, from: p.from, to: p.to });
      }
    }
    const keptMonths = [...kept].filter(([, keep]) => keep).map(([month]) => month);
    const mark = sql.markDropped(schema, report, boundary, months, keptMonths);
    const marked = (await withTransaction(client, () => firstRow(client, mark)))?.periods ?? 0;
    return { dropped, marked };
  } finally {
    await execute(client, sql.lock(key, 'unlock'));
  }
}
