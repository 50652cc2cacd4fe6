// The versions of a report's table (sql/009_report_versions.sql): which physical table holds the
// rows of a definition's dimensions, and which one the stable name report_<name> shows.
import type { ClientBase, Pool } from 'pg';
import type { Dimension } from '../config/dimensions.js';
import { UnmigratedDefinitionError } from './errors.js';
import { named, qualified, reportTable } from './sql.js';

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

/** The physical table of version `version` of `report`: report_<name>, then report_<name>__v<N>. */
export function versionTable(report: string, version: number): string {
  return version === 1 ? reportTable(report) : `${reportTable(report)}__v${version}`;
}

/** Every version of `report` (or of every report), oldest first. */
export async function readVersions(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  report?: string,
): Promise<ReportVersion[]> {
  const { rows } = await db.query<{
    report: string;
    version: number;
    dimensions: string[];
    table_name: string;
    state: VersionState;
    auto_swap: boolean;
    swapped_at: Date | null;
  }>(
    `SELECT report, version, dimensions, table_name, state, auto_swap, swapped_at
       FROM ${qualified(schema, 'report_versions')}
      WHERE $1::text IS NULL OR report = $1
      ORDER BY report, version`,
    [report ?? null],
  );
  return rows.map((r) => ({
    report: r.report,
    version: r.version,
    dimensions: r.dimensions,
    table: r.table_name,
    state: r.state,
    autoSwap: r.auto_swap,
    swappedAt: r.swapped_at,
  }));
}

/** Records a version (inside the caller's transaction). */
export async function recordVersion(
  client: ClientBase,
  schema: string,
  v: Pick<ReportVersion, 'report' | 'version' | 'dimensions' | 'table' | 'state' | 'autoSwap'>,
): Promise<void> {
  await client.query(
    `INSERT INTO ${qualified(schema, 'report_versions')} (report, version, dimensions, table_name, state, auto_swap)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [v.report, v.version, v.dimensions, v.table, v.state, v.autoSwap],
  );
}

/** tableOfSql's one row: read it with tableFrom. */
export interface TableOfRow {
  readonly table_name: string | null;
  readonly versions: number;
  readonly building: number;
}

/**
 * The query behind tableOf, as a FROM item (`... FROM (<text>) AS v`) so that the load can read it
 * in the statement that takes its lock; `first` is the number of its first parameter.
 */
export function tableOfSql(
  schema: string,
  report: string,
  dimensions: readonly Dimension[],
  first = 1,
): { text: string; values: unknown[] } {
  const versions = qualified(schema, 'report_versions');
  const r = `$${first}`;
  const d = `$${first + 1}`;
  return {
    text: `SELECT (SELECT table_name FROM ${versions} WHERE report = ${r} AND dimensions = ${d}::text[]) AS table_name,
              (SELECT count(*)::int FROM ${versions} WHERE report = ${r}) AS versions,
              (SELECT count(*)::int FROM ${versions} WHERE report = ${r} AND state = 'building') AS building`,
    values: [report, dimensions],
  };
}

/**
 * The table that holds the rows of `report` with `dimensions`, from tableOfSql's row: its
 * version's table, or report_<name> for a report whose versions are not recorded (a warehouse
 * migrated before them). Throws UnmigratedDefinitionError (retryable) for dimensions no version
 * has: the definition changed and `adops migrate` has not made its version yet. `evolving` says
 * whether the report has a building version, so that only its loads pay for the evolution's checks.
 */
export function tableFrom(
  found: TableOfRow | undefined,
  report: string,
  dimensions: readonly Dimension[],
): { table: string; evolving: boolean } {
  const evolving = (found?.building ?? 0) > 0;
  if (found?.table_name != null) return { table: found.table_name, evolving };
  if ((found?.versions ?? 0) === 0) return { table: reportTable(report), evolving };
  throw new UnmigratedDefinitionError(
    `the definition of ${report} has dimensions (${dimensions.join(', ')}) no table of it has yet: ` +
      'run adops migrate to make its new version; the pull is retried meanwhile',
  );
}

/** The table that holds the rows of `report` with `dimensions` (see tableFrom): one query. */
export async function tableOf(
  client: Pick<ClientBase, 'query'>,
  schema: string,
  report: string,
  dimensions: readonly Dimension[],
): Promise<{ table: string; evolving: boolean }> {
  const { rows } = await client.query<TableOfRow>(named(tableOfSql(schema, report, dimensions)));
  return tableFrom(rows[0], report, dimensions);
}

/** The building version of `report` (its dimensions and number), or undefined: one cheap query. */
export async function buildingVersion(
  pool: Pick<Pool, 'query'>,
  schema: string,
  report: string,
): Promise<{ version: number; dimensions: string[] } | undefined> {
  const { rows } = await pool.query<{ version: number; dimensions: string[] }>(
    named(
      `SELECT version, dimensions FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND state = 'building'`,
      [report],
    ),
  );
  return rows[0];
}
