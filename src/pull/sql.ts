// Every statement of a pull as a pure builder (history's reads are in history-sql.ts).
import {
  dimensionType,
  type Dimension,
  type DimensionType,
  COUNTERS,
} from '../platform/config/dimensions.js';
import type { UnreconciledReason } from '../flatten/errors.js';
import type { Period, ReportRow, Totals } from '../flatten/types.js';
import {
  ident,
  qualified,
  reportTable,
  statement,
  type CopyFormat,
  type Statement,
} from '../platform/pg/handle.js';
import { evolveLockKey } from '../schema/versions.js';
import { tableOf, type TableOfRow } from '../schema/sql.js';
import { copyColumns } from '../schema/report-tables.js';
import { rowFields, type CopyLayout } from './encode.js';

export type LoadStatus = 'loaded' | 'failed' | 'superseded';

/** The step a failed pull failed at (report_loads.failed_step), as dlt's PipelineStepFailed names it. */
export type PullStep = 'fetch' | 'parse' | 'load' | 'archive';

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
  readonly fetchToken: number | null;
  readonly error: string | null;
  readonly failedStep: PullStep | null;
  readonly jobId: string | null;
  readonly provisional?: boolean;
}

/** Where a load's rows go: the table, and what every row of it shares. */
export interface CopyTarget extends CopyLayout {
  readonly schema: string;
  readonly table: string;
}

/** A body to archive, whole (`body`, or `gzip` past a size) or streamed to report_raw_parts (`spoolId`): size and SHA-256 of the
 * stored (redacted) body, and SHA-256 of the body as received. */
export type PackedBody = {
  readonly bytes: number;
  readonly sha256: string;
  readonly receivedSha256: string;
} & (
  | { readonly body: Buffer; readonly gzip?: undefined; readonly spoolId?: undefined }
  | { readonly gzip: Buffer; readonly body?: undefined; readonly spoolId?: undefined }
  | { readonly spoolId: number; readonly body?: undefined; readonly gzip?: undefined }
);

/** Longest error text kept: enough for a message and its cause chain, not a whole body. */
const MAX_ERROR = 4000;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const ms = (v: number | null) => (v === null ? null : Math.round(v));

/** A new value of `sequence` (a fetch token, a spool id), as text. */
export function nextvalSql(schema: string, sequence: 'fetch_tokens' | 'report_raw_spool_seq') {
  return statement<{ id: string }>('SELECT nextval($1::regclass)::text AS id', [qualified(schema, sequence)]);
}

/**
 * The load's locks, first in its transaction, keyed by (schema.report, account/period) for each of its
 * periods: loads of other periods or accounts never wait on each other. Custom plans: a generic plan of
 * the claim's DELETE would lock every partition, a plan for the period's dates only its month's. The
 * shared evolution lock keeps a swap from retiring this load's version until it commits (a swap waits for
 * loads in flight; a later load finds its version retired).
 */
export function lockLoadSql(
  schema: string,
  report: string,
  account: string,
  periods: readonly Period[],
  timeoutMs: number,
) {
  // The default account's keys name no account: a single-account deployment's (and its tests').
  const who = account === 'default' ? '' : `${account}/`;
  return statement(
    "SELECT set_config('statement_timeout', $1, true), set_config('plan_cache_mode', 'force_custom_plan', true), " +
      // A request's periods in their order, oldest first: two requests that overlap lock in one order.
      '(SELECT count(pg_advisory_xact_lock(hashtext($2), hashtext(k))) FROM unnest($3::text[]) AS k), ' +
      'pg_advisory_xact_lock_shared(hashtext($4))',
    [
      String(timeoutMs),
      `${schema}.${report}`,
      periods.map((p) => `${who}${p.start}/${p.end}`),
      evolveLockKey(schema, report),
    ],
  );
}

/** Each report_loads column, its type and its value in a record. */
const LOAD_COLUMNS: ReadonlyArray<readonly [string, string, (r: LoadRecord) => unknown]> = [
  ['account', 'text', (r) => r.account],
  ['report', 'text', (r) => r.report],
  ['period_start', 'date', (r) => r.period.start],
  ['period_end', 'date', (r) => r.period.end],
  ['dimensions', 'text[]', (r) => [...r.dimensions]],
  ['status', 'text', (r) => r.status],
  ['rows', 'int', (r) => r.rows],
  ['reconciled', 'boolean', (r) => r.reconciled],
  ['unreconciled_reason', 'text', (r) => r.unreconciledReason],
  ['mismatch', 'jsonb', (r) => json(r.mismatch)],
  ['restatement', 'jsonb', (r) => json(r.restatement)],
  ['previous_load_id', 'bigint', (r) => r.previousLoadId],
  ['replay_of', 'bigint', (r) => r.replayOf],
  ['http_attempts', 'int', (r) => r.httpAttempts],
  ['response_bytes', 'bigint', (r) => r.responseBytes],
  ['fetch_ms', 'int', (r) => ms(r.fetchMs)],
  ['load_ms', 'int', (r) => ms(r.loadMs)],
  ['fetched_at', 'timestamptz', (r) => r.fetchedAt],
  ['fetch_token', 'bigint', (r) => r.fetchToken],
  ['error', 'text', (r) => (r.error === null ? null : r.error.slice(0, MAX_ERROR))],
  ['failed_step', 'text', (r) => r.failedStep],
  ['job_id', 'text', (r) => r.jobId],
  ['provisional', 'boolean', (r) => r.provisional ?? false],
];

/** INSERT of a report_loads row, returning its load_id. */
export function insertLoadSql(schema: string, r: LoadRecord) {
  const values = LOAD_COLUMNS.map(([, , value]) => value(r));
  const columns = LOAD_COLUMNS.map(([c]) => c);
  if (r.loadId !== undefined) {
    values.unshift(r.loadId);
    columns.unshift('load_id');
  }
  return statement<{ load_id: string }>(
    `INSERT INTO ${qualified(schema, 'report_loads')} (${columns.map(ident).join(', ')}) ` +
      `VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING load_id`,
    values,
  );
}

/** INSERT of the report_loads rows of one request's periods (their load ids taken by the claim): one period's
 * values, or one array per column, so the text is the same for any number of periods (`dimensions` is the
 * request's, one value). */
export function insertLoadsSql(
  schema: string,
  records: ReadonlyArray<LoadRecord & { loadId: number }>,
): Statement {
  const [first] = records;
  if (records.length === 1 && first !== undefined) return insertLoadSql(schema, first);
  const listed = LOAD_COLUMNS.filter(([c]) => c !== 'dimensions');
  const arrays = listed.map(([, type], i) => `$${i + 3}::${type}[]`);
  const names = listed.map((_, i) => `c${i}`);
  return statement(
    `INSERT INTO ${qualified(schema, 'report_loads')} (load_id, dimensions, ${listed.map(([c]) => ident(c)).join(', ')}) ` +
      `SELECT u.id, $2::text[], ${names.map((n) => `u.${n}`).join(', ')} ` +
      `FROM unnest($1::bigint[], ${arrays.join(', ')}) AS u(id, ${names.join(', ')})`,
    [
      records.map((r) => r.loadId),
      first === undefined ? [] : [...first.dimensions],
      ...listed.map(([, , value]) => records.map(value)),
    ],
  );
}

/** One period's totals as a request records them: owned from now on by `loadId`. */
export interface PeriodTotals {
  readonly period: Period;
  readonly totals: Totals;
  readonly loadId: number;
}

/** Upsert of each period's totals (NULL for a counter not given); `source`: the API's (a request of this
 * period alone) or its rows' sums (a request of several periods). One period's as values; several as one
 * array per column, one text for any number of them. */
export function upsertTotalsSql(
  schema: string,
  account: string,
  report: string,
  periods: readonly PeriodTotals[],
  source: 'api' | 'rows' = 'api',
) {
  const counters = COUNTERS.map(ident);
  const k = COUNTERS.map((_, i) => i);
  const [only] = periods;
  // $1 account, $2 report, $3 source, then period_start, period_end, the counters and load_id (arrays: several).
  const rows =
    periods.length === 1
      ? `VALUES ($1, $2, $4::date, $5::date, ${k.map((i) => `$${i + 6}::bigint`).join(', ')}, $${k.length + 6}::bigint, $3, now())`
      : `SELECT $1, $2, u.s, u.e, ${k.map((i) => `u.c${i}`).join(', ')}, u.id, $3, now() ` +
        `FROM unnest($4::date[], $5::date[], ${k.map((i) => `$${i + 6}::bigint[]`).join(', ')}, $${k.length + 6}::bigint[]) ` +
        `AS u(s, e, ${k.map((i) => `c${i}`).join(', ')}, id)`;
  const column = <T>(of: (p: PeriodTotals) => T) =>
    only !== undefined && periods.length === 1 ? of(only) : periods.map(of);
  return statement(
    `INSERT INTO ${qualified(schema, 'report_totals')} (account, report, period_start, period_end, ${counters.join(', ')}, load_id, totals_source, loaded_at) ` +
      `${rows} ON CONFLICT (account, report, period_start, period_end) DO UPDATE SET ` +
      [...counters, 'load_id', 'totals_source', 'loaded_at'].map((c) => `${c} = EXCLUDED.${c}`).join(', ') +
      // A period loaded again after retention dropped it (its retention was raised) holds rows again.
      ', retention_dropped_at = NULL',
    [
      account,
      report,
      source,
      column((p) => p.period.start),
      column((p) => p.period.end),
      ...COUNTERS.map((c) => column((p) => p.totals[c] ?? null)),
      column((p) => p.loadId),
    ],
  );
}

/** The claim's answer as one JSON column (one field to describe, not fifteen): a new load id; whether the
 * loaded response's fetch started after ours; the period's load, totals and whether it was provisional
 * (null: none); tableOf's row. */
export type Claimed = {
  next_id: string;
  stale: boolean;
  load_id: string | null;
  totals: Totals | null;
  provisional: boolean | null;
} & TableOfRow;

/**
 * Claims a request's periods for a load in one round trip, right after their locks (so its snapshot sees every
 * load committed before): a row per period, in their order. `stale` compares fetch tokens Postgres issued
 * (never a worker's clock). Unless stale, deletes each period's old rows from `table` when it is the one
 * tableOf's row names and not retired. One period's by constants; several by an array of starts and one of
 * ends (one text for any number of them), and the request's range as constants.
 */
export function claimPeriodsSql(
  schema: string,
  table: string,
  account: string,
  report: { readonly name: string; readonly dimensions: readonly Dimension[] },
  periods: readonly Period[],
  fetchToken: number,
) {
  // $1 report, $2 dimensions (tableOf's), $3 start(s), $4 end(s), $5 report_loads, $6 token, $7 account,
  // $8 report_<name> (the table of a report whose versions are not recorded), $9 `table`; several periods:
  // $10 the first one's start, $11 the last one's.
  const version = tableOf(schema, report.name, report.dimensions);
  // Totals as JSON numbers (a bigint past 2^53 loses precision, as Number() of its text would).
  const totals = COUNTERS.map((c) => `'${c}', t.${ident(c)}`).join(', ');
  const loads = qualified(schema, 'report_loads');
  // Each load by its id in a subquery: a join planned without statistics (a new table) may scan them all.
  const load = (column: string) =>
    `(SELECT l.${column} FROM ${loads} l WHERE l.account = $7 AND l.load_id = t.load_id) AS ${column}`;
  const c = `t.load_id::text AS load_id, json_build_object(${totals}) AS totals, ${load('fetch_token')}, ${load('provisional')}`;
  const current =
    `(SELECT coalesce(v.table_name, CASE WHEN v.versions = 0 THEN $8 END) = $9 ` +
    `AND v.state IS DISTINCT FROM 'retired' FROM v)`;
  const values = [
    ...version.values,
    ...[periods.map((p) => p.start), periods.map((p) => p.end), loads, fetchToken, account],
    ...[reportTable(report.name), table],
  ];
  const [only] = periods;
  if (periods.length === 1 && only !== undefined)
    return statement<{ claim: Claimed }>(
      `WITH v AS (${version.text}), ` +
        `c AS (SELECT ${c} FROM ${qualified(schema, 'report_totals')} t ` +
        `WHERE t.account = $7 AND t.report = $1 AND t.period_start = $3 AND t.period_end = $4), ` +
        `s AS (SELECT EXISTS (SELECT 1 FROM c WHERE c.fetch_token > $6) AS stale), ` +
        `d AS (DELETE FROM ${qualified(schema, table)} WHERE account = $7 AND period_start = $3 AND period_end = $4 ` +
        `AND NOT (SELECT stale FROM s) AND ${current}) ` +
        `SELECT row_to_json(r) AS claim FROM (SELECT n.next_id, s.stale, c.load_id, c.totals, c.provisional, v.* ` +
        `FROM (SELECT nextval(pg_get_serial_sequence($5, 'load_id'))::text AS next_id) n ` +
        `CROSS JOIN s CROSS JOIN v LEFT JOIN c ON true) r`,
      values.map((v, i) => (i === 2 ? only.start : i === 3 ? only.end : v)),
    );
  return statement<{ claim: Claimed }>(
    `WITH v AS (${version.text}), ` +
      `p AS (SELECT * FROM unnest($3::date[], $4::date[]) WITH ORDINALITY AS p(s, e, i)), ` +
      `c AS (SELECT p.i, ${c} FROM p JOIN ${qualified(schema, 'report_totals')} t ON t.account = $7 AND t.report = $1 ` +
      `AND t.period_start BETWEEN $10 AND $11 AND t.period_start = p.s AND t.period_end = p.e), ` +
      `s AS (SELECT p.i, p.s, p.e, EXISTS (SELECT 1 FROM c WHERE c.i = p.i AND c.fetch_token > $6) AS stale FROM p), ` +
      // The range as constants: pruned to its months when planned (a custom plan, see lockLoadSql).
      `d AS (DELETE FROM ${qualified(schema, table)} x USING s WHERE x.account = $7 AND x.period_start BETWEEN $10 AND $11 ` +
      `AND x.period_start = s.s AND x.period_end = s.e AND NOT s.stale AND ${current}) ` +
      // Load ids in the periods' order: nextval is evaluated after the sort.
      `SELECT row_to_json(r) AS claim FROM (SELECT nextval(pg_get_serial_sequence($5, 'load_id'))::text AS next_id, ` +
      `s.stale, c.load_id, c.totals, c.provisional, v.* ` +
      `FROM s CROSS JOIN v LEFT JOIN c ON c.i = s.i ORDER BY s.i) r`,
    [...values, periods[0]?.start, periods.at(-1)?.start],
  );
}

/** Several INSERTs as one statement (data-modifying CTEs; foreign keys are checked at its end). `texts`: the
 * statement texts made so far, by their parts' texts (a worker's loads have a few shapes, each made once). */
export function inOneStatement(statements: readonly Statement[], texts?: Map<string, string>): Statement {
  const values: unknown[] = [];
  for (const s of statements) for (const v of s.values) values.push(v);
  const key = texts === undefined ? '' : statements.map((s) => s.text).join('\u0000');
  let text = texts?.get(key);
  if (text === undefined) {
    let offset = 0;
    const parts = statements.map((s, i) => {
      const at = offset;
      offset += s.values.length;
      // Our builders quote every identifier and pass every value as a parameter: `$n` is only a placeholder.
      return `s${i} AS (${s.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + at}`)})`;
    });
    text = `WITH ${parts.join(', ')} SELECT 1`;
    texts?.set(key, text);
  }
  return statement(text, values);
}

const ARRAY_TYPE: Record<DimensionType, string> = {
  date: 'date[]',
  bigint: 'bigint[]',
  smallint: 'smallint[]',
  text: 'text[]',
};

/** The period and load of the rows of one INSERT; `loadId` null: a period whose rows are not written (stale). */
export interface RowsPeriod extends Period {
  readonly loadId: number | null;
}

/** Rows as the INSERT's parameters: one array literal per column and, for a request of several periods, each
 * row's period index (-1: not written). Made before the load's transaction, so the rows' objects are garbage by
 * the time it waits on Postgres (held across its round trips, they were most of what each young-generation
 * collection copied). */
export interface EncodedRows {
  readonly count: number;
  readonly columns: readonly string[];
  readonly at?: string;
}

/**
 * `rows` encoded for insertRowsSql, checked as COPY checks them (rowFields throws RowValueError) against the
 * layout's period (a request's range when several). Each array as its literal, in one join: pg's conversion of
 * JavaScript arrays cost more CPU than the rest. `at`: each row's period index, for a request of several.
 */
export function encodeRows(
  layout: Pick<CopyLayout, 'periodStart' | 'periodEnd' | 'dimensions'>,
  rows: readonly ReportRow[],
  at?: (row: ReportRow) => number,
): EncodedRows {
  const fieldsOf = rowFields(layout, (value, type) => (type === 'text' ? element(value) : value));
  const n = layout.dimensions.length;
  // Sized up front: grown a push at a time, each array is copied as it grows (garbage to collect).
  const sized = <T>() => new Array<T>(rows.length);
  const dims = layout.dimensions.map(() => sized<string>());
  const counters = COUNTERS.map(() => sized<number>());
  const periods = at === undefined ? [] : sized<number>();
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as ReportRow;
    // Its period first: a day outside the request's range is the routing's error, which names the range.
    if (at !== undefined) periods[r] = at(row);
    const fields = fieldsOf(row);
    for (let i = 0; i < n; i++) (dims[i] as string[])[r] = fields[i] ?? '';
    for (let k = 0; k < counters.length; k++) (counters[k] as number[])[r] = row.counters[k] ?? 0;
  }
  const columns = [...dims, ...counters].map((elements) => `{${elements.join(',')}}`);
  return { count: rows.length, columns, ...(at === undefined ? {} : { at: `{${periods.join(',')}}` }) };
}

/**
 * INSERT of encoded rows into the target: one array parameter per column, unnested, so the text depends only on
 * the table. Rows of one period take its period and load as values; rows of several (`of`, with `rows.at`), each
 * its period's, joined to the arrays of their periods; a period without a load id, or a row of none, is skipped.
 */
export function insertRowsSql(target: CopyTarget, rows: EncodedRows, of?: readonly RowsPeriod[]): Statement {
  const n = target.dimensions.length;
  const several = of !== undefined;
  // $1 period_start, $2 period_end, $3 load_id (each an array of the periods' when several), $4 account, then
  // one array per dimension and per counter, and (several) each row's period index.
  const arrays = [
    ...target.dimensions.map((d, i) => `$${i + 5}::${ARRAY_TYPE[dimensionType(d)]}`),
    ...COUNTERS.map((_, k) => `$${n + k + 5}::bigint[]`),
    ...(several ? [`$${n + COUNTERS.length + 5}::int[]`] : []),
  ];
  const names = arrays.map((_, i) => `c${i}`);
  const cells = names.slice(0, n + COUNTERS.length).map((c) => `u.${c}`);
  const into = `INSERT INTO ${qualified(target.schema, target.table)} (${copyColumns(target.dimensions).map(ident).join(', ')}) `;
  const from = `FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')})`;
  if (!several)
    return statement(`${into}SELECT $1::date, $2::date, ${cells.join(', ')}, $3::bigint, $4::text ${from}`, [
      target.periodStart,
      target.periodEnd,
      target.loadId,
      target.account,
      ...rows.columns,
    ]);
  return statement(
    `${into}SELECT p.s, p.e, ${cells.join(', ')}, p.id, $4::text ${from} ` +
      `JOIN unnest($1::date[], $2::date[], $3::bigint[]) WITH ORDINALITY AS p(s, e, id, i) ON p.i = u.${names.at(-1) ?? ''} + 1 ` +
      'WHERE p.id IS NOT NULL',
    [
      of.map((p) => p.start),
      of.map((p) => p.end),
      of.map((p) => p.loadId),
      target.account,
      ...rows.columns,
      rows.at ?? '{}',
    ],
  );
}

/** Text an array literal takes as it is: no quote, brace, comma, backslash or white space, not empty, and not
 * NULL (a null element). */
const BARE_ELEMENT = /^[^"{},\\\s]+$/;
const NULL_ELEMENT = /^null$/i;

/** A text element of an array literal: as it is when it can be (most values: no new string), else in double
 * quotes, its `"` and `\` escaped by a backslash. */
function element(value: string): string {
  if (BARE_ELEMENT.test(value) && !NULL_ELEMENT.test(value)) return value;
  return value.includes('"') || value.includes('\\') ? `"${value.replace(/["\\]/g, '\\$&')}"` : `"${value}"`;
}

/** The COPY FROM STDIN of a load's rows into `target`. */
export function copyRowsSql(target: CopyTarget, format: CopyFormat): string {
  const columns = copyColumns(target.dimensions).map(ident).join(', ');
  return (
    `COPY ${qualified(target.schema, target.table)} (${columns}) FROM STDIN` +
    (format === 'binary' ? ' WITH (FORMAT binary)' : '')
  );
}

/** INSERT of the archived body of `loadId`. */
export function archiveBodySql(schema: string, account: string, loadId: number, p: PackedBody) {
  return statement(
    `INSERT INTO ${qualified(schema, 'report_raw')} (account, load_id, body, body_gzip, spool_id, body_bytes, body_sha256, received_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [account, loadId, p.body ?? null, p.gzip ?? null, p.spoolId ?? null, p.bytes, p.sha256, p.receivedSha256],
  );
}

/** INSERT of one compressed part of a streamed body. */
export function insertRawPartSql(
  schema: string,
  account: string,
  spoolId: number,
  part: number,
  gzip: Buffer,
) {
  return statement(
    `INSERT INTO ${qualified(schema, 'report_raw_parts')} (account, spool_id, part, gzip) VALUES ($1, $2, $3, $4)`,
    [account, spoolId, part, gzip],
  );
}

/** The archived body of a load: whole in body (or body_gzip: archived before sql/008_raw_body.sql, or past
 * 8 MB), or in the parts of spool_id. */
export function rawBodySql(schema: string, loadId: number) {
  return statement<{
    body: Buffer | null;
    body_gzip: Buffer | null;
    spool_id: string | null;
    account: string;
    body_sha256: string;
  }>(
    `SELECT body, body_gzip, spool_id, account, body_sha256 FROM ${qualified(schema, 'report_raw')} WHERE load_id = $1`,
    [loadId],
  );
}

/** The parts of a streamed body, in order. */
export function rawPartsSql(schema: string, account: string, spoolId: string | null) {
  return statement<{ gzip: Buffer }>(
    `SELECT gzip FROM ${qualified(schema, 'report_raw_parts')} WHERE account = $1 AND spool_id = $2 ORDER BY part`,
    [account, spoolId],
  );
}

/** The digest (as received) of the body archived with the latest load of a report's period. */
export function latestDigestSql(schema: string, account: string, report: string, period: Period) {
  return statement<{ received_sha256: string | null }>(
    `SELECT r.received_sha256 FROM ${qualified(schema, 'report_loads')} l
       LEFT JOIN ${qualified(schema, 'report_raw')} r ON r.account = l.account AND r.load_id = l.load_id
      WHERE l.account = $4 AND l.report = $1 AND l.period_start = $2 AND l.period_end = $3
      ORDER BY l.load_id DESC LIMIT 1`,
    [report, period.start, period.end, account],
  );
}

/** DELETE of archived bodies older than `keepDays`. */
export function pruneRawSql(schema: string, keepDays: number) {
  return statement(
    `DELETE FROM ${qualified(schema, 'report_raw')} WHERE archived_at < now() - make_interval(days => $1)`,
    [keepDays],
  );
}

/** DELETE of the parts no body names, at least a day old (a body still streaming in keeps its parts). */
export function pruneRawPartsSql(schema: string, keepDays: number) {
  return statement(
    `DELETE FROM ${qualified(schema, 'report_raw_parts')} p
      WHERE p.written_at < now() - make_interval(days => greatest($1::int, 1))
        AND NOT EXISTS (SELECT 1 FROM ${qualified(schema, 'report_raw')} r WHERE r.account = p.account AND r.spool_id = p.spool_id)`,
    [keepDays],
  );
}

/** The fetch of a load as replay takes it up again: its request's range (the loads of its fetch token),
 * and the load its body was archived with (its own, or its request's first period's; null: not kept). */
export function archivedLoadSql(schema: string, loadId: number) {
  const loads = qualified(schema, 'report_loads');
  return statement<{
    account: string;
    report: string;
    period_start: string;
    period_end: string;
    request_start: string;
    request_end: string;
    dimensions: Dimension[];
    http_attempts: number;
    fetch_ms: number | null;
    fetched_at: Date | null;
    fetch_token: string | null;
    provisional: boolean;
    archived_at: Date | null;
    body_load_id: string | null;
  }>(
    `SELECT l.account, l.report, l.period_start::text, l.period_end::text, l.dimensions, l.http_attempts, l.fetch_ms,
            l.fetched_at, l.fetch_token::text, l.provisional, r.archived_at, r.load_id::text AS body_load_id,
            coalesce(q.start, l.period_start)::text AS request_start, coalesce(q.until, l.period_end)::text AS request_end
       FROM ${loads} l
       LEFT JOIN LATERAL (
         SELECT r.archived_at, r.load_id FROM ${qualified(schema, 'report_raw')} r
          WHERE r.account = l.account AND (r.load_id = l.load_id OR r.load_id IN (
            SELECT s.load_id FROM ${loads} s
             WHERE s.account = l.account AND s.fetch_token = l.fetch_token AND s.replay_of IS NULL))
          ORDER BY r.load_id = l.load_id DESC LIMIT 1) r ON true
       LEFT JOIN LATERAL (
         SELECT min(s.period_start) AS start, max(s.period_end) AS until FROM ${loads} s
          WHERE s.account = l.account AND s.fetch_token = l.fetch_token AND s.report = l.report
            AND s.replay_of IS NULL) q ON true
      WHERE l.load_id = $1`,
    [loadId],
  );
}
