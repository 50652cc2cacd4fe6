// Every statement of schema/ but views-sql.ts's: pure builders; COMMENT text goes in as an escaped literal.
import { escapeLiteral } from 'pg';
import type { Dimension } from '../platform/config/dimensions.js';
import { addDays } from '../platform/dates/calendar.js';
import { addMonths } from '../plan/retention.js';
import { ident, MAX_IDENTIFIER_BYTES, qualified, statement, type Statement } from '../platform/pg/handle.js';

export type VersionState = 'serving' | 'building' | 'retired';

export interface ReportVersion {
  readonly report: string;
  readonly version: number;
  readonly dimensions: readonly string[];
  readonly table: string;
  readonly state: VersionState;
  readonly autoSwap: boolean;
  readonly swappedAt: Date | null;
}

/** One column as Postgres' format_type() names its type. */
export interface ColumnSpec {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly default?: string;
}

export interface IndexSpec {
  readonly name: string;
  readonly columns: readonly string[];
  /** Columns keyed by md5 (a 16-byte uuid): a btree entry holds about 2.7 KB, a text value any length. */
  readonly hashed: readonly string[];
  readonly unique: boolean;
}

export interface TableSpec {
  readonly table: string;
  readonly columns: readonly ColumnSpec[];
  readonly indexes: readonly IndexSpec[];
  readonly partitioned: boolean; // Range-partitioned by period_start, one partition a month (partitions.ts).
}

/** The CHECK on a partition's `day`: lets constraint exclusion skip other months when BI filters on it. */
export const DAY_CHECK = 'day_in_partition';

/** An advisory lock on hashtext(`key`): held for the transaction (`xact`) or the session. */
export function lock(key: string, kind: 'xact' | 'session' | 'try' | 'unlock' = 'xact') {
  const fn = {
    xact: 'pg_advisory_xact_lock',
    session: 'pg_advisory_lock',
    try: 'pg_try_advisory_lock',
    unlock: 'pg_advisory_unlock',
  }[kind];
  const as = kind === 'try' ? ' AS locked' : '';
  return statement<{ locked: boolean }>(`SELECT ${fn}(hashtext($1))${as}`, [key]);
}

export const dbNow = (): Statement<{ now: Date }> => statement('SELECT now() AS now');

export const createSchema = (schema: string) => statement(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);

export const createMigrationsTable = (schema: string) =>
  statement(`CREATE TABLE IF NOT EXISTS ${qualified(schema, 'schema_migrations')} (
     version integer PRIMARY KEY,
     name text NOT NULL,
     checksum text NOT NULL,
     applied_at timestamptz NOT NULL DEFAULT now()
   )`);

export const appliedMigrations = (schema: string) =>
  statement<{ version: number; name: string; checksum: string }>(
    `SELECT version, name, checksum FROM ${qualified(schema, 'schema_migrations')} ORDER BY version`,
  );

/** The search path of one transaction: migrations and view files name tables unqualified. */
export const localSearchPath = (schema: string) =>
  statement(`SET LOCAL search_path TO ${ident(schema)}, public`);

export const recordMigration = (schema: string, m: { version: number; name: string; checksum: string }) =>
  statement(
    `INSERT INTO ${qualified(schema, 'schema_migrations')} (version, name, checksum) VALUES ($1, $2, $3)`,
    [m.version, m.name, m.checksum],
  );

/** The schema's comment, how many relations it holds and the first five tables' or views' names. */
export const schemaClaim = (schema: string) =>
  statement<{ comment: string | null; n: number; names: string[] }>(
    `SELECT obj_description(n.oid, 'pg_namespace') AS comment,
            (SELECT count(*)::int FROM pg_class c WHERE c.relnamespace = n.oid) AS n,
            ARRAY(SELECT c.relname::text FROM pg_class c
                   WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm')
                   ORDER BY c.relname LIMIT 5) AS names
       FROM pg_namespace n WHERE n.nspname = $1`,
    [schema],
  );

export function comment(
  kind: 'SCHEMA' | 'TABLE' | 'VIEW' | 'COLUMN',
  schema: string,
  name: string,
  text: string,
  column?: string,
) {
  const target =
    kind === 'SCHEMA'
      ? ident(schema)
      : `${qualified(schema, name)}${column === undefined ? '' : `.${ident(column)}`}`;
  return statement(`COMMENT ON ${kind} ${target} IS ${escapeLiteral(text)}`);
}

/** The table or view `name` (as COMMENT ON names its kind) and its comment, if it exists. */
export const relation = (schema: string, name: string) =>
  statement<{ kind: 'TABLE' | 'VIEW'; comment: string | null }>(
    `SELECT CASE c.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END AS kind,
            obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v')`,
    [schema, name],
  );

/** One column of a table or view as found, in order: its type as format_type() names it. */
export interface FoundColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly comment: string | null;
}

export const columnsOf = (schema: string, name: string) =>
  statement<FoundColumn>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
            col_description(a.attrelid, a.attnum) AS comment
       FROM pg_attribute a
      WHERE a.attrelid = to_regclass(quote_ident($1) || '.' || quote_ident($2))
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [schema, name],
  );

/** Every version of `report` (or of every report), oldest first. */
export const versions = (schema: string, report?: string) =>
  statement<ReportVersion>(
    `SELECT report, version, dimensions, table_name AS "table", state, auto_swap AS "autoSwap",
            swapped_at AS "swappedAt"
       FROM ${qualified(schema, 'report_versions')}
      WHERE $1::text IS NULL OR report = $1
      ORDER BY report, version`,
    [report ?? null],
  );

export interface TableOfRow {
  /** The table, state and number of the version with the definition's dimensions; null: none. */
  readonly table_name: string | null;
  readonly state: VersionState | null;
  readonly version: number | null;
  readonly versions: number;
  readonly building: number;
  readonly serving: number | null;
}

/** The version lookup as a FROM item, read by the load's claim in its own statement; one row. */
export function tableOf(
  schema: string,
  report: string,
  dimensions: readonly Dimension[],
  first = 1,
): { text: string; values: unknown[] } {
  const mine = `FILTER (WHERE dimensions = $${first + 1}::text[])`;
  return {
    text: `SELECT max(table_name) ${mine} AS table_name, max(state) ${mine} AS state, max(version) ${mine} AS version,
              count(*)::int AS versions, (count(*) FILTER (WHERE state = 'building'))::int AS building,
              max(version) FILTER (WHERE state = 'serving') AS serving
         FROM ${qualified(schema, 'report_versions')} WHERE report = $${first}`,
    values: [report, dimensions],
  };
}

export const insertVersion = (schema: string, v: Omit<ReportVersion, 'swappedAt'>) =>
  statement(
    `INSERT INTO ${qualified(schema, 'report_versions')} (report, version, dimensions, table_name, state, auto_swap)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [v.report, v.version, v.dimensions, v.table, v.state, v.autoSwap],
  );

export const setVersionState = (schema: string, report: string, version: number, state: VersionState) =>
  statement(
    `UPDATE ${qualified(schema, 'report_versions')} SET state = $3 WHERE report = $1 AND version = $2`,
    [report, version, state],
  );

/** Of `names`, the reports with no report_<name> relation in `schema`. */
export const withoutTable = (schema: string, names: readonly string[]) =>
  statement<{ name: string }>(
    `SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(format('%I.%I', $2::text, 'report_' || name)) IS NULL`,
    [names, schema],
  );

/** CREATE TABLE and CREATE INDEX statements for a spec; indexes use IF NOT EXISTS so they can be re-added. */
export function createTable(schema: string, spec: TableSpec): { table: Statement; indexes: Statement[] } {
  const columns = spec.columns.map(
    (c) =>
      `${ident(c.name)} ${c.type}${c.notNull ? ' NOT NULL' : ''}${c.default === undefined ? '' : ` DEFAULT ${c.default}`}`,
  );
  return {
    table: statement(
      `CREATE TABLE ${qualified(schema, spec.table)} (\n  ${columns.join(',\n  ')}\n)` +
        (spec.partitioned ? ' PARTITION BY RANGE (period_start)' : ''),
    ),
    indexes: spec.indexes.map((ix) => createIndex(schema, spec.table, ix)),
  };
}

export function createIndex(schema: string, table: string, ix: IndexSpec) {
  const keys = ix.columns.map((c) => (ix.hashed.includes(c) ? `(md5(${ident(c)})::uuid)` : ident(c)));
  return statement(
    `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(ix.name)} ON ${qualified(schema, table)} (${keys.join(', ')})`,
  );
}

/** The report_ tables of `schema` (not partitions). */
export const reportTables = (schema: string) =>
  statement<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname LIKE 'report\\_%'`,
    [schema],
  );

/** The indexes of `table`, each key as Postgres shows it: a column's name, or an expression such as (md5(x)::uuid). */
export const indexesOf = (schema: string, table: string) =>
  statement<{ name: string; unique: boolean; keys: string[] }>(
    `SELECT ic.relname AS name, i.indisunique AS unique,
            array(SELECT pg_get_indexdef(i.indexrelid, k.ord::int, true)
                    FROM generate_series(1, i.indnkeyatts) k(ord) ORDER BY k.ord)::text[] AS keys
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass`,
    [schema, table],
  );

/** The range partitions of `table` with their bounds as pg_get_expr shows them; with `months` (YYYY-MM-01),
 * only those starting on one of them. */
export const partitionBounds = (schema: string, table: string, months?: readonly string[]) =>
  statement<{ name: string; bound: string; pending: boolean }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, i.inhdetachpending AS pending
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass(quote_ident($1) || '.' || quote_ident($2))
        AND ($3::text[] IS NULL OR pg_get_expr(c.relpartbound, c.oid) LIKE ANY ($3))`,
    [schema, table, months === undefined ? null : months.map((m) => `%FROM ('${m}')%`)],
  );

/** The tables `report`'s loads may write, with their partitions: from the catalog, no lock waits. With a
 * `month` (YYYY-MM-01), only the partitions that may be its (the one named `<table>__pYYYYMM`, or all of a
 * table whose names are shortened past MAX_IDENTIFIER_BYTES): a table of years of months sends one name, not
 * all of them, each time a load meets a month. */
export const liveTables = (schema: string, report: string, month?: string) =>
  statement<{ table_name: string; partitions: string[] }>(
    `SELECT v.table_name, ARRAY(SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                                 WHERE i.inhparent = to_regclass(quote_ident($2) || '.' || quote_ident(v.table_name))
                                   AND ($3::text IS NULL OR c.relname = v.table_name || $3
                                        OR octet_length(v.table_name || $3) > $4)) AS partitions
       FROM ${qualified(schema, 'report_versions')} v WHERE v.report = $1 AND v.state <> 'retired'`,
    [
      report,
      schema,
      month === undefined ? null : `__p${month.slice(0, 4)}${month.slice(5, 7)}`,
      MAX_IDENTIFIER_BYTES,
    ],
  );

/** A partition of `table` for `month`: a plain table (LIKE copies columns in order), then attached. */
export function makePartition(schema: string, table: string, name: string, month: string, byDay: boolean) {
  const next = addMonths(month, 1);
  return [
    statement(
      `CREATE TABLE ${qualified(schema, name)} (LIKE ${qualified(schema, table)} INCLUDING DEFAULTS)`,
    ),
    ...(byDay
      ? // A period starts in the month; a week starting on its last day ends six days later.
        [
          statement(
            `ALTER TABLE ${qualified(schema, name)} ADD CONSTRAINT ${ident(DAY_CHECK)} CHECK (day >= '${month}' AND day < '${addDays(next, 6)}')`,
          ),
        ]
      : []),
    statement(
      `ALTER TABLE ${qualified(schema, table)} ATTACH PARTITION ${qualified(schema, name)} FOR VALUES FROM ('${month}') TO ('${next}')`,
    ),
  ];
}

/** DETACH ... CONCURRENTLY (FINALIZE when an interrupted one left it pending), then DROP. */
export function dropPartition(schema: string, table: string, p: { name: string; detachPending: boolean }) {
  return [
    statement(
      `ALTER TABLE ${qualified(schema, table)} DETACH PARTITION ${qualified(schema, p.name)} ${p.detachPending ? 'FINALIZE' : 'CONCURRENTLY'}`,
    ),
    statement(`DROP TABLE ${qualified(schema, p.name)}`),
  ];
}

/** Whether month `p` stays past the boundary: by the database's clock, or with a load under `months` old. */
export const keptByDatabase = (
  schema: string,
  report: string,
  p: { from: string; to: string },
  months: number,
) =>
  statement<{ keep: boolean }>(
    `SELECT $3::date > (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => $4::int))::date
         OR EXISTS (
              SELECT 1 FROM ${qualified(schema, 'report_loads')}
               WHERE recorded_at > ((now() AT TIME ZONE 'UTC') - make_interval(months => $4::int)) AT TIME ZONE 'UTC'
                 AND report = $1 AND status = 'loaded' AND period_start >= $2::date AND period_start < $3::date
            ) AS keep`,
    [report, p.from, p.to, months],
  );

/** Marks `report`'s periods before both boundaries, outside `kept`, as dropped by retention; counts them. */
export const markDropped = (
  schema: string,
  report: string,
  boundary: string,
  months: number,
  kept: readonly string[],
) =>
  statement<{ periods: number }>(
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

/** Every table (not partition) of `schema` with an account column, and each unique key including account. */
export const accountTables = (schema: string) =>
  statement<{ name: string; columns: string[]; keys: string[][] | null }>(
    `SELECT c.relname AS name,
            (SELECT array_agg(a.attname::text) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT json_agg((SELECT coalesce(array_agg(a.attname::text ORDER BY a.attnum), '{}')
                               FROM pg_attribute a
                              WHERE a.attrelid = c.oid AND a.attnum = ANY(i.indkey) AND a.attname <> 'account'))
               FROM pg_index i
              WHERE i.indrelid = c.oid AND i.indisunique
                AND (SELECT attnum FROM pg_attribute WHERE attrelid = c.oid AND attname = 'account') = ANY(i.indkey)
            ) AS keys
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account'
                       AND NOT a.attisdropped)
      ORDER BY 1`,
    [schema],
  );

/** How long `timeout` a statement of this transaction waits for a lock, then the EXCLUSIVE locks on `tables`. */
export function lockTables(
  schema: string,
  tables: readonly string[],
  timeout: string,
): [Statement, Statement] {
  return [
    statement(`SET LOCAL lock_timeout = ${escapeLiteral(timeout)}`),
    statement(`LOCK TABLE ${tables.map((t) => qualified(schema, t)).join(', ')} IN EXCLUSIVE MODE`),
  ];
}

export const holdings = (schema: string, tables: readonly string[]) =>
  statement<{ account: string; name: string; n: number }>(
    tables
      .map(
        (t, i) =>
          `SELECT account, $${i + 1}::text AS name, count(*)::int AS n FROM ${qualified(schema, t)} GROUP BY account`,
      )
      .join(' UNION ALL '),
    tables,
  );

/** `from`'s loaded periods that `to` loaded too, marked superseded; returns their load_ids. */
export function supersedeOverlap(schema: string, from: string, to: string) {
  const loads = qualified(schema, 'report_loads');
  return statement<{ load_id: string }>(
    `UPDATE ${loads} f SET status = 'superseded'
      WHERE f.account = $1 AND f.status = 'loaded'
        AND EXISTS (SELECT 1 FROM ${loads} t
                     WHERE t.account = $2 AND t.status = 'loaded' AND t.report = f.report
                       AND t.period_start <= f.period_end AND t.period_end >= f.period_start)
      RETURNING f.load_id`,
    [from, to],
  );
}

export const deleteLoads = (schema: string, table: string, account: string, ids: readonly string[]) =>
  statement(`DELETE FROM ${qualified(schema, table)} WHERE account = $1 AND load_id = ANY($2::bigint[])`, [
    account,
    ids,
  ]);

/** Deletes `from`'s rows of `table` whose `key` (its other columns) `to` holds too. */
export function deleteKeyOverlap(
  schema: string,
  table: string,
  key: readonly string[],
  from: string,
  to: string,
) {
  const target = qualified(schema, table);
  const same = key.map((c) => `o.${ident(c)} = f.${ident(c)}`);
  return statement(
    `DELETE FROM ${target} f WHERE f.account = $1
        AND EXISTS (SELECT 1 FROM ${target} o WHERE ${['o.account = $2', ...same].join(' AND ')})`,
    [from, to],
  );
}

/** Moves every row of `from` in `tables` to `to` in one statement; column m<i> counts table i's. */
export function moveAccount(schema: string, tables: readonly string[], from: string, to: string) {
  const steps = tables.map(
    (t, i) => `m${i} AS (UPDATE ${qualified(schema, t)} SET account = $2 WHERE account = $1 RETURNING 1)`,
  );
  const counts = tables.map((_, i) => `(SELECT count(*) FROM m${i})::int AS m${i}`);
  return statement<Record<string, number>>(`WITH ${steps.join(', ')} SELECT ${counts.join(', ')}`, [
    from,
    to,
  ]);
}
