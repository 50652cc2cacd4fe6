// The statements that record a load: its report_loads row, the period's report_totals, the claim
// of the period, a small period's rows as one INSERT. Built as pure {text, values}, so their
// parameters are checked without a database.
import {
  dimensionType,
  type Dimension,
  type DimensionType,
  COUNTERS,
  type CounterName,
} from '../platform/config/dimensions.js';
import type { UnreconciledReason } from '../flatten/errors.js';
import type { Counters, Period, ReportRow, Totals } from '../flatten/types.js';
import { ident, qualified, reportTable } from '../platform/pg/handle.js';
import { tableOfSql, type TableOfRow } from '../schema/sql.js';
import { copyColumns } from '../schema/report-tables.js';
import type { CopyTarget } from './copy.js';
import { rowFields } from './encode.js';

export type LoadStatus = 'loaded' | 'failed' | 'superseded';

/** One report_loads row; `loadId` when taken up front, else assigned by the insert. */
export interface LoadRecord {
  readonly loadId?: number;
  readonly account: string;
  readonly report: string;
  readonly period: Period;
  readonly dimensions: readonly string[];
  readonly status: LoadStatus;
  readonly rows: number | null;
  readonly reconciled: boolean | null;
  /** Why not reconciled ('mismatch', 'no totals', 'partial totals'); null when reconciled or not parsed. */
  readonly unreconciledReason: UnreconciledReason | null;
  readonly mismatch: unknown;
  readonly restatement: unknown;
  readonly previousLoadId: number | null;
  readonly replayOf: number | null;
  readonly httpAttempts: number;
  readonly responseBytes: number | null;
  readonly fetchMs: number | null;
  readonly loadMs: number | null;
  readonly fetchedAt: Date | null;
  /** The fencing token taken when the fetch started (takeFetchToken); null when none was taken. */
  readonly fetchToken: number | null;
  readonly error: string | null;
  readonly jobId: string | null;
}

/** Statement texts by what they depend on (schema, table, dimensions): built once, not per load. */
const texts = new Map<string, string>();

/** The text of `key`, built by `build` the first time. */
function textOf(key: string, build: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = build();
    // A handful of schemas and reports: the cap only guards against a caller's mistake.
    if (texts.size < 10_000) texts.set(key, text);
  }
  return text;
}

/** Longest error text kept: enough for a message and its cause chain, not a whole body. */
const MAX_ERROR = 4000;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const ms = (v: number | null) => (v === null ? null : Math.round(v));

/** Each report_loads column and its value in a record. */
const LOAD_COLUMNS: ReadonlyArray<readonly [string, (r: LoadRecord) => unknown]> = [
  ['account', (r) => r.account],
  ['report', (r) => r.report],
  ['period_start', (r) => r.period.start],
  ['period_end', (r) => r.period.end],
  ['dimensions', (r) => [...r.dimensions]],
  ['status', (r) => r.status],
  ['rows', (r) => r.rows],
  ['reconciled', (r) => r.reconciled],
  ['unreconciled_reason', (r) => r.unreconciledReason],
  ['mismatch', (r) => json(r.mismatch)],
  ['restatement', (r) => json(r.restatement)],
  ['previous_load_id', (r) => r.previousLoadId],
  ['replay_of', (r) => r.replayOf],
  ['http_attempts', (r) => r.httpAttempts],
  ['response_bytes', (r) => r.responseBytes],
  ['fetch_ms', (r) => ms(r.fetchMs)],
  ['load_ms', (r) => ms(r.loadMs)],
  ['fetched_at', (r) => r.fetchedAt],
  ['fetch_token', (r) => r.fetchToken],
  ['error', (r) => (r.error === null ? null : r.error.slice(0, MAX_ERROR))],
  ['job_id', (r) => r.jobId],
];

/** INSERT of a report_loads row, returning its load_id. */
export function insertLoadSql(schema: string, r: LoadRecord): { text: string; values: unknown[] } {
  const values = LOAD_COLUMNS.map(([, value]) => value(r));
  const withId = r.loadId !== undefined;
  if (withId) values.unshift(r.loadId);
  const text = textOf(`loads\u0000${schema}\u0000${withId}`, () => {
    const columns = (withId ? ['load_id'] : []).concat(LOAD_COLUMNS.map(([c]) => c));
    return (
      `INSERT INTO ${qualified(schema, 'report_loads')} (${columns.map(ident).join(', ')}) ` +
      `VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING load_id`
    );
  });
  return { text, values };
}

/** Upsert of the period's totals (NULL for a counter not given), owned from now on by `loadId`. */
export function upsertTotalsSql(
  schema: string,
  account: string,
  report: string,
  period: Period,
  totals: Totals,
  loadId: number,
): { text: string; values: unknown[] } {
  const text = textOf(`totals\u0000${schema}`, () => {
    const counters = COUNTERS.map(ident);
    return (
      `INSERT INTO ${qualified(schema, 'report_totals')} (account, report, period_start, period_end, ${counters.join(', ')}, load_id, loaded_at) ` +
      `VALUES ($1, $2, $3, $4, ${COUNTERS.map((_, i) => `$${i + 5}`).join(', ')}, $${COUNTERS.length + 5}, now()) ` +
      `ON CONFLICT (account, report, period_start, period_end) DO UPDATE SET ` +
      [...counters, 'load_id', 'loaded_at'].map((c) => `${c} = EXCLUDED.${c}`).join(', ') +
      // A period loaded again after retention dropped it (its retention was raised) holds rows again.
      ', retention_dropped_at = NULL'
    );
  });
  return {
    text,
    values: [account, report, period.start, period.end, ...COUNTERS.map((c) => totals[c]), loadId],
  };
}

/**
 * The claim's answer, one JSON column (`claim`; one field to describe, not fifteen): a new load id;
 * whether the loaded response's fetch started after ours; the period's report_totals row joined to
 * its load (bigints as text; null for a period never loaded, or for a counter that load was not
 * given); and tableOfSql's row.
 */
export type Claimed = {
  next_id: string;
  stale: boolean;
  load_id: string | null;
  fetch_token: number | null;
} & Record<CounterName, string | null> &
  TableOfRow;

/**
 * Claims a period for a load in one round trip, run right after the period's lock is taken (so
 * its snapshot sees every load committed before): see Claimed. `stale` compares the fetch tokens
 * Postgres issued (never a worker's clock). Unless stale, the period's old rows are deleted from
 * `table`, ready for the new ones, when `table` is the one tableOfSql's row names and not retired.
 */
export function claimPeriodSql(
  schema: string,
  table: string,
  account: string,
  report: { readonly name: string; readonly dimensions: readonly string[] },
  period: Period,
  fetchToken: number,
): { text: string; values: unknown[] } {
  // $1 report, $2 dimensions (tableOfSql's), $3 start, $4 end, $5 report_loads, $6 token, $7 account,
  // $8 report_<name> (the table of a report whose versions are not recorded), $9 `table`.
  const version = tableOfSql(schema, report.name, report.dimensions as Dimension[]);
  const text = textOf(`claim\u0000${schema}\u0000${table}\u0000${report.name}`, () => {
    const counters = COUNTERS.map((c) => `t.${ident(c)}::text AS ${ident(c)}`).join(', ');
    return (
      `WITH v AS (${version.text}), ` +
      `c AS (SELECT t.load_id::text AS load_id, l.fetch_token, ${counters} ` +
      `FROM ${qualified(schema, 'report_totals')} t JOIN ${qualified(schema, 'report_loads')} l ON l.account = t.account AND l.load_id = t.load_id ` +
      `WHERE t.account = $7 AND t.report = $1 AND t.period_start = $3 AND t.period_end = $4), ` +
      `s AS (SELECT EXISTS (SELECT 1 FROM c WHERE c.fetch_token > $6) AS stale), ` +
      `d AS (DELETE FROM ${qualified(schema, table)} WHERE account = $7 AND period_start = $3 AND period_end = $4 ` +
      `AND NOT (SELECT stale FROM s) AND (SELECT coalesce(v.table_name, CASE WHEN v.versions = 0 THEN $8 END) = $9 ` +
      `AND v.state IS DISTINCT FROM 'retired' FROM v)) ` +
      `SELECT row_to_json(r) AS claim FROM (SELECT n.next_id, s.stale, c.*, v.* ` +
      `FROM (SELECT nextval(pg_get_serial_sequence($5, 'load_id'))::text AS next_id) n ` +
      `CROSS JOIN s CROSS JOIN v LEFT JOIN c ON true) r`
    );
  });
  return {
    text,
    values: [
      ...version.values,
      period.start,
      period.end,
      qualified(schema, 'report_loads'),
      fetchToken,
      account,
      reportTable(report.name),
      table,
    ],
  };
}

/**
 * Several INSERT statements as one (data-modifying CTEs): one round trip instead of one each.
 * Foreign keys between them hold, since they are checked at the end of the statement.
 */
export function inOneStatement(statements: ReadonlyArray<{ text: string; values: unknown[] }>): {
  text: string;
  values: unknown[];
} {
  const values: unknown[] = [];
  const offsets = statements.map((s) => {
    const offset = values.length;
    for (const v of s.values) values.push(v);
    return offset;
  });
  const text = textOf(`together\u0000${statements.map((s) => s.text).join('\u0000')}`, () => {
    const parts = statements.map((s, i) => {
      // Our builders quote every identifier and pass every value as a parameter, so `$n` occurs
      // in their text only as a placeholder.
      const text = s.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + (offsets[i] as number)}`);
      return `s${i} AS (${text})`;
    });
    return `WITH ${parts.join(', ')} SELECT 1`;
  });
  return { text, values };
}

const ARRAY_TYPE: Record<DimensionType, string> = {
  date: 'date[]',
  bigint: 'bigint[]',
  smallint: 'smallint[]',
  text: 'text[]',
};

/**
 * INSERT of `rows` into the target table, checked exactly as COPY checks them (rowFields:
 * a bad value throws RowValueError before anything is sent). Values go as parameters, one array
 * per column, unnested together, so the statement's text depends only on the table. Each array
 * goes as its Postgres literal, written here in one join: pg's own conversion of JavaScript
 * arrays cost more CPU than the rest of a small pull's statement.
 */
export function insertRowsSql(
  target: CopyTarget,
  rows: readonly ReportRow[],
): { text: string; values: unknown[] } {
  const fieldsOf = rowFields(target, (value, type) => (type === 'text' ? quoted(value) : value));
  const dims: string[][] = target.dimensions.map(() => []);
  const counters: number[][] = COUNTERS.map(() => []);
  for (const row of rows) {
    const fields = fieldsOf(row);
    for (let i = 0; i < dims.length; i++) (dims[i] as string[]).push(fields[i] as string);
    for (let k = 0; k < counters.length; k++) (counters[k] as number[]).push(row.counters[k] as number);
  }
  // $1 period_start, $2 period_end, $3 load_id, $4 account, then one array per dimension and per counter.
  const key = `rows\u0000${target.schema}\u0000${target.table}\u0000${target.dimensions.join(',')}`;
  const text = textOf(key, () => {
    const arrays = [
      ...target.dimensions.map((d, i) => `$${i + 5}::${ARRAY_TYPE[dimensionType(d)]}`),
      ...COUNTERS.map((_, k) => `$${target.dimensions.length + k + 5}::bigint[]`),
    ];
    const names = arrays.map((_, i) => `c${i}`);
    return (
      `INSERT INTO ${qualified(target.schema, target.table)} (${copyColumns(target.dimensions).map(ident).join(', ')}) ` +
      `SELECT $1::date, $2::date, ${names.map((n) => `u.${n}`).join(', ')}, $3::bigint, $4::text ` +
      `FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')})`
    );
  });
  return {
    text,
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

/** Per counter: the previous load's total and the new load's change of it (null: not measurable). */
export type Restatement = Record<CounterName, { previous: number | null; delta: number | null }>;

/** The change of each total from `previous` to `current` (null where either lacks the total). */
export function restatementOf(previous: Totals, current: Totals): Restatement {
  const out = {} as Restatement;
  for (const c of COUNTERS) {
    const [before, now] = [previous[c], current[c]];
    out[c] = { previous: before, delta: before === null || now === null ? null : now - before };
  }
  return out;
}

/** True when any total measurably changed. */
export function isRestated(r: Restatement): boolean {
  return COUNTERS.some((c) => r[c].delta !== null && r[c].delta !== 0);
}

/**
 * The largest relative change of any counter's total: |delta| / previous (1 when only the previous
 * total was 0, 0 when nothing changed or nothing could be measured).
 */
export function maxRelativeChange(r: Restatement): number {
  let max = 0;
  for (const c of COUNTERS) {
    const { previous, delta } = r[c];
    if (previous !== null && delta !== null && delta !== 0)
      max = Math.max(max, previous === 0 ? 1 : Math.abs(delta) / previous);
  }
  return max;
}

/** One reload of a period: its age (whole days from the period's last day to the fetch) and what changed. */
export interface RestatementSample {
  readonly report: string;
  readonly ageDays: number;
  readonly restatement: Restatement;
}

/**
 * Reloads of one report's periods at one age: how many, how many changed any total, the mean
 * |delta| per counter over the reloads that could measure it (0 when none could), and the
 * largest maxRelativeChange.
 */
export interface RestatementSummary {
  readonly report: string;
  readonly age_days: number;
  readonly loads: number;
  readonly restated: number;
  readonly avg_abs_change: Counters;
  readonly max_rel_change: number;
}

/** Groups reloads by report and age, sorted by report then age. */
export function summarizeRestatements(samples: Iterable<RestatementSample>): RestatementSummary[] {
  const groups = new Map<string, { report: string; age: number; items: Restatement[] }>();
  for (const s of samples) {
    const key = `${s.report}\u0000${s.ageDays}`;
    const g = groups.get(key) ?? { report: s.report, age: s.ageDays, items: [] };
    groups.set(key, g);
    g.items.push(s.restatement);
  }
  return [...groups.values()]
    .sort((a, b) => (a.report === b.report ? a.age - b.age : a.report < b.report ? -1 : 1))
    .map((g) => {
      const avg = {} as Counters;
      for (const c of COUNTERS) {
        const deltas = g.items.flatMap(({ [c]: { previous, delta } }) =>
          previous === null || delta === null ? [] : [Math.abs(delta)],
        );
        avg[c] = deltas.length === 0 ? 0 : deltas.reduce((a, b) => a + b, 0) / deltas.length;
      }
      return {
        report: g.report,
        age_days: g.age,
        loads: g.items.length,
        restated: g.items.filter(isRestated).length,
        avg_abs_change: avg,
        max_rel_change: Math.max(0, ...g.items.map(maxRelativeChange)),
      };
    });
}
