// The versions of a report's table (report_versions), and the new version a change of dimensions starts.
import { TerminalError, TransientError } from '../platform/retry/errors.js';
import type { ClientBase } from 'pg';
import type { Dimension } from '../platform/config/dimensions.js';
import type { Queryable, Warehouse } from '../platform/pg/handle.js';
import { derivedName, execute, reportTable, rowsOf } from '../platform/pg/handle.js';
import type { ReportJob } from '../platform/config/jobs.js';
import * as sql from './sql.js';

/** Every version of `report` (or of every report), oldest first; on `db` (a transaction's client). */
export function readVersions(
  wh: Warehouse,
  report?: string,
  db: Queryable = wh.pool,
): Promise<sql.ReportVersion[]> {
  return rowsOf(db, sql.versions(wh.schema, report));
}

/** The advisory lock (one key, hashtext) a swap takes exclusively and a load shares. */
export function evolveLockKey(schema: string, report: string): string {
  return `adops-evolve:${schema}.${report}`;
}

/** Where a load goes: `evolving` when a version is building; `retired`: a pull from before the switch. */
export interface LoadTarget {
  readonly table: string;
  readonly evolving: boolean;
  readonly retired?: { readonly version: number; readonly serving: number | null };
}

/** The table of `report`'s version with `dimensions`; a TransientError until `adops migrate` makes it. */
export function tableFrom(
  found: sql.TableOfRow | undefined,
  report: string,
  dimensions: readonly Dimension[],
): LoadTarget {
  // A report `adops migrate` never saw has no table either: the load then fails with its hint.
  if (found === undefined || found.versions === 0) return { table: reportTable(report), evolving: false };
  if (found.table_name === null)
    throw new TransientError(
      `the definition of ${report} has dimensions (${dimensions.join(', ')}) no table of it has yet: ` +
        'run adops migrate to make its new version; the pull is retried meanwhile',
    );
  const target = { table: found.table_name, evolving: found.building > 0 };
  if (found.state !== 'retired' || found.version === null) return target;
  return { ...target, retired: { version: found.version, serving: found.serving } };
}

/** The building version of `report` (its dimensions and number), or undefined: one cheap query. */
export async function buildingVersion(wh: Warehouse, report: string): Promise<sql.ReportVersion | undefined> {
  return (await readVersions(wh, report)).find((v) => v.state === 'building');
}

/** A report loading into version `to` while its stable name shows `from`; `started`: this run made it. */
export interface Evolving {
  readonly report: string;
  readonly from: number;
  readonly to: number;
  readonly table: string;
  readonly started: boolean;
}

/** The definitions among `reports` no table can load: their pulls fail until `adops migrate` runs. */
export async function definitionsWithoutTable(
  wh: Warehouse,
  reports: readonly Pick<ReportJob, 'name' | 'dimensions'>[],
): Promise<Array<{ readonly report: string; readonly dimensions: readonly string[] }>> {
  if (reports.length === 0) return [];
  const versions = await readVersions(wh);
  const names = reports.map((r) => r.name);
  const noTable = new Set((await rowsOf(wh, sql.withoutTable(wh.schema, names))).map((r) => r.name));
  return reports
    .filter((r) => {
      const mine = versions.filter((v) => v.report === r.name);
      if (mine.length === 0) return noTable.has(r.name);
      return !mine.some((v) => sameDimensions(v.dimensions, r.dimensions));
    })
    .map((r) => ({ report: r.name, dimensions: r.dimensions }));
}

export function sameDimensions(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** The table `report` loads into, decided by `adops migrate`: version 1, its dimensions' one, or new. */
export async function versionFor(
  client: ClientBase,
  wh: Warehouse,
  report: ReportJob,
  autoSwap: boolean,
): Promise<{ table: string; evolving?: Evolving }> {
  // A new version's table: report_<name> for the first, then report_<name>__v<N>.
  const record = async (version: number, state: 'serving' | 'building'): Promise<sql.ReportVersion> => {
    const table =
      version === 1 ? reportTable(report.name) : derivedName(`${reportTable(report.name)}__v${version}`);
    const v = { report: report.name, version, dimensions: [...report.dimensions], table, state, autoSwap };
    await execute(client, sql.insertVersion(wh.schema, v));
    return { ...v, swappedAt: null };
  };
  const setState = (v: sql.ReportVersion, state: sql.ReportVersion['state']) =>
    execute(client, sql.setVersionState(wh.schema, v.report, v.version, state));
  const versions = await readVersions(wh, report.name, client);
  if (versions.length === 0) versions.push(await record(1, 'serving'));
  const serving = versions.find((v) => v.state === 'serving');
  if (serving === undefined) throw new Error(`report_versions holds no serving version of ${report.name}`);
  const same = versions.find((v) => sameDimensions(v.dimensions, report.dimensions));
  const building = versions.find((v) => v.state === 'building');
  if (same?.state === 'serving') {
    // Back to the serving shape: a change that was being built is abandoned (its table is kept).
    if (building !== undefined) await setState(building, 'retired');
    return { table: same.table };
  }
  if (same !== undefined && same === building)
    return { table: same.table, evolving: evolving(report, serving, same, false) };
  if (building !== undefined) await setState(building, 'retired');
  if (same !== undefined) {
    // Back to the dimensions of a retired version: it is built up again beside the serving one.
    await setState(same, 'building');
    return { table: same.table, evolving: evolving(report, serving, same, true) };
  }
  const next = await record(Math.max(...versions.map((v) => v.version)) + 1, 'building');
  return { table: next.table, evolving: evolving(report, serving, next, true) };
}

function evolving(
  report: ReportJob,
  serving: sql.ReportVersion,
  to: Pick<sql.ReportVersion, 'version' | 'table'>,
  started: boolean,
): Evolving {
  return { report: report.name, from: serving.version, to: to.version, table: to.table, started };
}

/** What `adops migrate`, `--bi-role` or `accounts rename` refuses; the CLI prints it as the failure. */
export class SchemaRefusal extends TerminalError {
  override readonly name = 'SchemaRefusal';
}
