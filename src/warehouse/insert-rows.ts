// A small period's rows as one INSERT statement, one array parameter per column: it travels with
// the load's last statement, where a COPY would cost two more round trips of its own.
import { dimensionType, type DimensionType } from '../config/dimensions.js';
import { COUNTERS, type ReportRow } from '../flatten/types.js';
import { createRowCheck } from './copy-encode.js';
import type { CopyTarget } from './copy-rows.js';
import { ident, qualified } from './pg.js';
import { copyColumns } from './schema/report-tables.js';

const ARRAY_TYPE: Record<DimensionType, string> = {
  date: 'date[]',
  bigint: 'bigint[]',
  smallint: 'smallint[]',
  text: 'text[]',
};

/**
 * INSERT of `rows` into the target table, checked exactly as COPY checks them (createRowCheck:
 * a bad value throws RowValueError before anything is sent). Values go as parameters, one array
 * per column, unnested together, so the statement's text depends only on the table. Each array
 * goes as its Postgres literal, written here in one join: pg's own conversion of JavaScript
 * arrays cost more CPU than the rest of a small pull's statement.
 */
export function insertRowsSql(
  target: CopyTarget,
  rows: readonly ReportRow[],
): { text: string; values: unknown[] } {
  const check = createRowCheck(target);
  const text = target.dimensions.map((d) => dimensionType(d) === 'text');
  const dims: string[][] = target.dimensions.map(() => []);
  const counters: number[][] = COUNTERS.map(() => []);
  for (const row of rows) {
    check(row);
    for (let i = 0; i < dims.length; i++) {
      const value = row.dims[i] as string;
      (dims[i] as string[]).push(text[i] === true ? quoted(value) : value);
    }
    for (let k = 0; k < counters.length; k++) (counters[k] as number[]).push(row.counters[k] as number);
  }
  // $1 period_start, $2 period_end, $3 load_id, $4 account, then one array per dimension and per counter.
  const arrays = [
    ...target.dimensions.map((d, i) => `$${i + 5}::${ARRAY_TYPE[dimensionType(d)]}`),
    ...COUNTERS.map((_, k) => `$${target.dimensions.length + k + 5}::bigint[]`),
  ];
  const names = arrays.map((_, i) => `c${i}`);
  return {
    text:
      `INSERT INTO ${qualified(target.schema, target.table)} (${copyColumns(target.dimensions).map(ident).join(', ')}) ` +
      `SELECT $1::date, $2::date, ${names.map((n) => `u.${n}`).join(', ')}, $3::bigint, $4::text ` +
      `FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')})`,
    values: [
      target.periodStart,
      target.periodEnd,
      target.loadId,
      target.account,
      ...dims.map(arrayLiteral),
      ...counters.map(arrayLiteral),
    ],
  };
}

/**
 * A Postgres array literal of elements already in their literal form: checked dates and whole
 * numbers (no character an array literal treats specially), and text elements `quoted`.
 */
function arrayLiteral(elements: ReadonlyArray<string | number>): string {
  return `{${elements.join(',')}}`;
}

/** A text element of an array literal: in double quotes, its `"` and `\` escaped by a backslash. */
function quoted(value: string): string {
  return value.includes('"') || value.includes('\\') ? `"${value.replace(/["\\]/g, '\\$&')}"` : `"${value}"`;
}
