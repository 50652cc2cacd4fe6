// Which table version a definition loads into, decided by `adops migrate`: the version whose
// dimensions are the definition's, or a new one when the dimensions changed (report evolution).
import type { ClientBase } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { COUNTERS } from '../flatten/types.js';
import { qualified, reportTable } from './pg.js';
import { readVersions, recordVersion, versionTable, type ReportVersion } from './versions.js';

/** A report whose definition now loads into a version the stable name does not show yet. */
export interface Evolving {
  readonly report: string;
  /** The version report_<name> shows (the old shape). */
  readonly from: number;
  /** The version the definition loads into (the new shape). */
  readonly to: number;
  readonly table: string;
  /** True when this migrate run created the version. */
  readonly started: boolean;
}

const FIXED_COLUMNS = new Set<string>([
  'period_start',
  'period_end',
  ...COUNTERS,
  'load_id',
  'loaded_at',
  'account',
]);

/** True when two dimension lists are the same, in the same order. */
export function sameDimensions(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** The dimension columns of an existing report table, in table order. */
async function dimensionsOf(client: ClientBase, schema: string, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_attribute a
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [qualified(schema, table)],
  );
  return rows.map((r) => r.name).filter((n) => !FIXED_COLUMNS.has(n));
}

/**
 * The table `report`'s definition loads into, recording versions as needed (inside the caller's
 * transaction): version 1 for a report seen for the first time (report_<name>, existing or about
 * to be created); the version with the definition's dimensions; or a new building version when
 * no version has them. A building version of an earlier change that never swapped is retired.
 */
export async function versionFor(
  client: ClientBase,
  schema: string,
  report: ReportJob,
  existing: ReadonlySet<string>,
  autoSwap: boolean,
): Promise<{ table: string; evolving?: Evolving }> {
  const versions = await readVersions(client, schema, report.name);
  if (versions.length === 0) {
    const legacy = reportTable(report.name);
    const dimensions = existing.has(legacy)
      ? await dimensionsOf(client, schema, legacy)
      : [...report.dimensions];
    const first = {
      report: report.name,
      version: 1,
      dimensions,
      table: legacy,
      state: 'serving',
      autoSwap,
    } as const;
    await recordVersion(client, schema, first);
    versions.push({ ...first, swappedAt: null });
  }
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
  const version = Math.max(...versions.map((v) => v.version)) + 1;
  const next = {
    report: report.name,
    version,
    dimensions: [...report.dimensions],
    table: versionTable(report.name, version),
    state: 'building',
    autoSwap,
  } as const;
  await recordVersion(client, schema, next);
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
