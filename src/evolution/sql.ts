// Every statement of evolution/: pure builders of a Statement, run through rowsOf/firstRow/execute.
import { ident, qualified, statement, type Statement } from '../platform/pg/handle.js';

/** The serving version's final periods, newest first, and whether the building one covers each for all accounts
 * (loaded in the new shape and reconciled, or without totals: only a mismatch blocks the switch). */
export function coverage(
  schema: string,
  report: string,
  serving: readonly string[],
  building: readonly string[],
) {
  const loads = qualified(schema, 'report_loads');
  return statement<{ start: string; end: string; covered: boolean }>(
    `WITH old AS (
       SELECT DISTINCT account, period_start, period_end FROM ${loads}
        WHERE report = $1 AND dimensions = $2::text[] AND status = 'loaded' AND NOT provisional),
     new AS (
       SELECT DISTINCT account, period_start, period_end FROM ${loads}
        WHERE report = $1 AND dimensions = $3::text[] AND status = 'loaded'
          AND (reconciled IS NOT FALSE OR unreconciled_reason IN ('no totals', 'partial totals')))
     SELECT old.period_start::text AS start, old.period_end::text AS "end", bool_and(new.period_start IS NOT NULL) AS covered
       FROM old LEFT JOIN new USING (account, period_start, period_end)
      GROUP BY old.period_start, old.period_end
      ORDER BY old.period_start DESC, old.period_end DESC`,
    [report, serving, building],
  );
}

/** report_<name> as a view over the building table; `dropView` first (RESTRICT: a user's view is kept). */
export function stableView(schema: string, stable: string, table: string, dropView: boolean): Statement[] {
  return [
    ...(dropView ? [statement(`DROP VIEW ${qualified(schema, stable)}`)] : []),
    statement(`CREATE VIEW ${qualified(schema, stable)} AS SELECT * FROM ${qualified(schema, table)}`),
  ];
}

/** `serving` retired and `building` serving: two statements, as the one-serving index is checked per row. */
export function switchVersions(schema: string, report: string, serving: number, building: number) {
  const versions = qualified(schema, 'report_versions');
  return [
    statement(`UPDATE ${versions} SET state = 'retired' WHERE report = $1 AND version = $2`, [
      report,
      serving,
    ]),
    statement(
      `UPDATE ${versions} SET state = 'serving', swapped_at = now() WHERE report = $1 AND version = $2`,
      [report, building],
    ),
  ];
}

export const setVersionTable = (schema: string, report: string, version: number, table: string) =>
  statement(
    `UPDATE ${qualified(schema, 'report_versions')} SET table_name = $3 WHERE report = $1 AND version = $2`,
    [report, version, table],
  );

export const rename = (kind: 'TABLE' | 'INDEX', schema: string, from: string, to: string) =>
  statement(`ALTER ${kind} ${qualified(schema, from)} RENAME TO ${ident(to)}`);

export const indexNames = (schema: string, table: string) =>
  statement<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = $1::regclass`,
    [qualified(schema, table)],
  );

/** A retired version gone: its table and its row of report_versions. */
export function dropVersion(schema: string, report: string, version: number, table: string): Statement[] {
  return [
    statement(`DROP TABLE IF EXISTS ${qualified(schema, table)}`),
    statement(`DELETE FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND version = $2`, [
      report,
      version,
    ]),
  ];
}
