// The shape of a report_<name> table, derived from its job definition: pure, so drift detection
// and the generated DDL are unit tested without a database.
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import { dimensionType, type Dimension } from '../config/dimensions.js';
import type { ReportJob } from '../config/jobs.js';
import { COUNTERS } from '../flatten/types.js';
import { PARTITION_CLAUSE } from './partitions.js';
import { ident, qualified, reportTable } from './pg.js';

/** One column as Postgres' format_type() names its type. */
export interface ColumnSpec {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly default?: string;
}

export interface IndexSpec {
  readonly name: string;
  /** The key's columns, in order. */
  readonly columns: readonly string[];
  /**
   * Those of `columns` keyed by the md5 of their value (as a 16-byte uuid) instead of the value:
   * a btree entry holds about 2.7 KB, and a text value's length is the API's to choose.
   */
  readonly hashed: readonly string[];
  readonly unique: boolean;
}

export interface TableSpec {
  readonly table: string;
  readonly columns: readonly ColumnSpec[];
  readonly indexes: readonly IndexSpec[];
  /**
   * Range-partitioned by period_start, one partition a month (src/warehouse/partitions.ts).
   */
  readonly partitioned: boolean;
}

/** The columns COPY writes, in table order (loaded_at is left to its default: the load's now()). */
export function copyColumns(dimensions: readonly Dimension[]): string[] {
  return ['period_start', 'period_end', ...dimensions, ...COUNTERS, 'load_id', 'account'];
}

/**
 * The account column, last: tables of releases before accounts gain it in place (ADD COLUMN
 * appends), so a new table and an upgraded one have the same column order.
 */
export const ACCOUNT_COLUMN: ColumnSpec = {
  name: 'account',
  type: 'text',
  notNull: true,
  default: `'${DEFAULT_ACCOUNT}'::text`,
};

/**
 * The expected table of a report definition: report_<name>, or `table` (a later version of it,
 * whose indexes are then named after it, so versions never collide).
 */
export function tableSpec(
  report: Pick<ReportJob, 'name' | 'dimensions'>,
  table: string = reportTable(report.name),
): TableSpec {
  const columns: ColumnSpec[] = [
    { name: 'period_start', type: 'date', notNull: true },
    { name: 'period_end', type: 'date', notNull: true },
    ...report.dimensions.map((d) => ({ name: d, type: dimensionType(d), notNull: true })),
    ...COUNTERS.map((c) => ({ name: c, type: 'bigint', notNull: true })),
    { name: 'load_id', type: 'bigint', notNull: true },
    { name: 'loaded_at', type: 'timestamp with time zone', notNull: true, default: 'now()' },
    ACCOUNT_COLUMN,
  ];
  // The unique index leads with the period, which a partitioned table's unique keys must include
  // (Postgres checks them per partition); so it also serves BI's period range scans and the
  // loader's DELETE of a period: a separate period index would only slow every load down. Text
  // values go in by their md5, so a 10 KB landing URL fits; two distinct values with one md5
  // exist only by construction, and would fail the load as a repeated row, never merge rows.
  // The account leads: every unique key holds it (Citus' distribution column), and a load's
  // DELETE and BI's queries are of one account.
  const indexes: IndexSpec[] = [
    {
      name: `${table}_key`,
      columns: ['account', 'period_start', 'period_end', ...report.dimensions],
      hashed: report.dimensions.filter((d) => dimensionType(d) === 'text'),
      unique: true,
    },
    ...report.dimensions
      .filter((d) => d.endsWith('_id'))
      .map((d) => ({ name: `${table}_${d}`, columns: [d], hashed: [], unique: false })),
  ];
  return { table, columns, indexes, partitioned: true };
}

/** CREATE TABLE and CREATE INDEX statements for a spec; indexes use IF NOT EXISTS so they can be re-added. */
export function createTableSql(schema: string, spec: TableSpec): { table: string; indexes: string[] } {
  const columns = spec.columns.map(
    (c) =>
      `${ident(c.name)} ${c.type}${c.notNull ? ' NOT NULL' : ''}${c.default === undefined ? '' : ` DEFAULT ${c.default}`}`,
  );
  return {
    table:
      `CREATE TABLE ${qualified(schema, spec.table)} (\n  ${columns.join(',\n  ')}\n)` +
      (spec.partitioned ? ` ${PARTITION_CLAUSE}` : ''),
    indexes: spec.indexes.map((ix) => createIndexSql(schema, spec.table, ix, ix.name)),
  };
}

/** CREATE INDEX IF NOT EXISTS of `ix` on `table`, named `name`. */
export function createIndexSql(schema: string, table: string, ix: IndexSpec, name: string): string {
  const keys = ix.columns.map((c) => (ix.hashed.includes(c) ? `(md5(${ident(c)})::uuid)` : ident(c)));
  return `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${qualified(schema, table)} (${keys.join(', ')})`;
}

/** The index's keys as Postgres shows them (pg_get_indexdef of each key): how drift is detected. */
export function indexKeys(ix: IndexSpec): string[] {
  return ix.columns.map((c) => (ix.hashed.includes(c) ? `(md5(${c})::uuid)` : c));
}

/** A column as found in the database. */
export interface FoundColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
}

/**
 * What differs between the expected columns and those found, one line each; empty when they match.
 * Column order matters: COPY and BI queries rely on it being the definition's order.
 */
export function columnDifferences(expected: readonly ColumnSpec[], found: readonly FoundColumn[]): string[] {
  const out: string[] = [];
  const foundByName = new Map(found.map((c) => [c.name, c]));
  const expectedNames = new Set(expected.map((c) => c.name));
  for (const e of expected) {
    const f = foundByName.get(e.name);
    if (f === undefined) out.push(`column ${e.name} (${e.type}) is missing`);
    else if (f.type !== e.type) out.push(`column ${e.name} is ${f.type}, expected ${e.type}`);
    else if (f.notNull !== e.notNull)
      out.push(`column ${e.name} is ${f.notNull ? '' : 'not '}NOT NULL, expected the opposite`);
  }
  for (const f of found) {
    if (!expectedNames.has(f.name)) out.push(`column ${f.name} (${f.type}) is not in the definition`);
  }
  if (out.length === 0) {
    const want = expected.map((c) => c.name).join(', ');
    const have = found.map((c) => c.name).join(', ');
    if (want !== have) out.push(`columns are in order (${have}), expected (${want})`);
  }
  return out;
}
