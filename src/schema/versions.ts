// The versions of a report's table (report_versions): which physical table holds the rows of a
// definition's dimensions, which one the stable name report_<name> shows, and, decided by
// `adops migrate`, the new version a change of dimensions starts (report evolution).
import { TransientError } from '../platform/retry/errors.js';
import type { ClientBase, Pool } from 'pg';
import type { Dimension } from '../platform/config/dimensions.js';
import { type Warehouse, derivedName, named, qualified, reportTable } from '../platform/pg/handle.js';
import type { ReportJob } from '../platform/config/jobs.js';

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

/** Every version of `report` (or of every report), oldest first. */
export async function readVersions(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  report?: string,
): Promise<ReportVersion[]> {
  const { rows } = await db.query<ReportVersion>(
    `SELECT report, version, dimensions, table_name AS "table", state, auto_swap AS "autoSwap",
            swapped_at AS "swappedAt"
       FROM ${qualified(schema, 'report_versions')}
      WHERE $1::text IS NULL OR report = $1
      ORDER BY report, version`,
    [report ?? null],
  );
  return rows;
}

/** The advisory lock (one key, hashtext) a swap takes exclusively and a load shares. */
export function evolveLockKey(schema: string, report: string): string {
  return `adops-evolve:${schema}.${report}`;
}

/** Where a load goes: `evolving` when a version is building (its loads run the evolution's checks);
 * `retired` for a retired version's dimensions (a pull from before the switch): no load is made. */
export interface LoadTarget {
  readonly table: string;
  readonly evolving: boolean;
  readonly retired?: { readonly version: number; readonly serving: number | null };
}

/** tableOfSql's one row: read it with tableFrom. */
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
export function tableOfSql(
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

/** The table of `report`'s version with `dimensions`, from tableOfSql's row; UnmigratedDefinitionError
 * (retryable) when `adops migrate` has not made that version yet. */
export function tableFrom(
  found: TableOfRow | undefined,
  report: string,
  dimensions: readonly Dimension[],
): LoadTarget {
  // A report `adops migrate` never saw has no table either: the load then fails with its hint.
  if (found === undefined || found.versions === 0) return { table: reportTable(report), evolving: false };
  if (found.table_name === null)
    throw new UnmigratedDefinitionError(
      `the definition of ${report} has dimensions (${dimensions.join(', ')}) no table of it has yet: ` +
        'run adops migrate to make its new version; the pull is retried meanwhile',
    );
  const target = { table: found.table_name, evolving: found.building > 0 };
  if (found.state !== 'retired' || found.version === null) return target;
  return { ...target, retired: { version: found.version, serving: found.serving } };
}

/** The building version of `report` (its dimensions and number), or undefined: one cheap query. */
export async function buildingVersion(
  wh: Warehouse,
  report: string,
): Promise<{ version: number; dimensions: string[] } | undefined> {
  const { pool, schema } = wh;
  const { rows } = await pool.query<{ version: number; dimensions: string[] }>(
    named(
      `SELECT version, dimensions FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND state = 'building'`,
      [report],
    ),
  );
  return rows[0];
}

/** A report loading into version `to` while its stable name shows `from`; `started`: this run made it. */
export interface Evolving {
  readonly report: string;
  readonly from: number;
  readonly to: number;
  readonly table: string;
  readonly started: boolean;
}

/**
 * The definitions among `reports` no table can load: no version of theirs has their dimensions (their
 * dimensions changed and `adops migrate` has not run), or, with no version on record, no report_<name>
 * table exists (the report is new). Every pull of theirs fails until `adops migrate` runs.
 */
export async function definitionsWithoutTable(
  wh: Warehouse,
  reports: readonly Pick<ReportJob, 'name' | 'dimensions'>[],
): Promise<Array<{ readonly report: string; readonly dimensions: readonly string[] }>> {
  if (reports.length === 0) return [];
  const versions = await readVersions(wh.pool, wh.schema);
  const { rows } = await wh.pool.query<{ name: string }>(
    `SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(format('%I.%I', $2::text, 'report_' || name)) IS NULL`,
    [reports.map((r) => r.name), wh.schema],
  );
  const noTable = new Set(rows.map((r) => r.name));
  return reports
    .filter((r) => {
      const mine = versions.filter((v) => v.report === r.name);
      if (mine.length === 0) return noTable.has(r.name);
      return !mine.some((v) => sameDimensions(v.dimensions, r.dimensions));
    })
    .map((r) => ({ report: r.name, dimensions: r.dimensions }));
}

/** True when two dimension lists are the same, in the same order. */
export function sameDimensions(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * The table `report` loads into, decided by `adops migrate` in the caller's transaction: version 1
 * for a new report, the version with its dimensions, or a new building one (retiring a building
 * version of an earlier change that never swapped).
 */
export async function versionFor(
  client: ClientBase,
  schema: string,
  report: ReportJob,
  autoSwap: boolean,
): Promise<{ table: string; evolving?: Evolving }> {
  // A new version's table: report_<name> for the first, then report_<name>__v<N>.
  const record = async (version: number, state: 'serving' | 'building'): Promise<ReportVersion> => {
    const table =
      version === 1 ? reportTable(report.name) : derivedName(`${reportTable(report.name)}__v${version}`);
    const dimensions = [...report.dimensions];
    await client.query(
      `INSERT INTO ${qualified(schema, 'report_versions')} (report, version, dimensions, table_name, state, auto_swap)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [report.name, version, dimensions, table, state, autoSwap],
    );
    return { report: report.name, version, dimensions, table, state, autoSwap, swappedAt: null };
  };
  const versions = await readVersions(client, schema, report.name);
  if (versions.length === 0) versions.push(await record(1, 'serving'));
  const serving = versions.find((v) => v.state === 'serving') as ReportVersion;
  const same = versions.find((v) => sameDimensions(v.dimensions, report.dimensions));
  const building = versions.find((v) => v.state === 'building');
  if (same?.state === 'serving') {
    // Back to the serving shape: a change that was being built is abandoned (its table is kept).
    if (building !== undefined) await setState(client, schema, building, 'retired');
    return { table: same.table };
  }
  if (same !== undefined && same === building)
    return { table: same.table, evolving: evolving(report, serving, same, false) };
  if (building !== undefined) await setState(client, schema, building, 'retired');
  if (same !== undefined) {
    // Back to the dimensions of a retired version: it is built up again beside the serving one.
    await setState(client, schema, same, 'building');
    return { table: same.table, evolving: evolving(report, serving, same, true) };
  }
  const next = await record(Math.max(...versions.map((v) => v.version)) + 1, 'building');
  return { table: next.table, evolving: evolving(report, serving, next, true) };
}

function evolving(
  report: ReportJob,
  serving: ReportVersion,
  to: Pick<ReportVersion, 'version' | 'table'>,
  started: boolean,
): Evolving {
  return { report: report.name, from: serving.version, to: to.version, table: to.table, started };
}

async function setState(
  client: ClientBase,
  schema: string,
  v: ReportVersion,
  state: ReportVersion['state'],
): Promise<void> {
  await client.query(
    `UPDATE ${qualified(schema, 'report_versions')} SET state = $3 WHERE report = $1 AND version = $2`,
    [v.report, v.version, state],
  );
}

/** A definition whose dimensions no table version has yet: retried until `adops migrate` makes it. */
export class UnmigratedDefinitionError extends TransientError {
  override readonly name = 'UnmigratedDefinitionError';
}
