// The report_<name> tables, from the job definitions; one that no longer matches is refused, never dropped.
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { type Dimension, dimensionType, COUNTERS } from '../platform/config/dimensions.js';
import type { ReportJob } from '../platform/config/jobs.js';
import type { Warehouse } from '../platform/pg/handle.js';
import { derivedName, execute, reportTable, rowsOf, withTransaction } from '../platform/pg/handle.js';
import type { ClientBase } from 'pg';
import { ConfigError } from '../platform/config/files.js';
import { type Evolving, SchemaRefusal, readVersions, versionFor } from './versions.js';
import * as sql from './sql.js';

/** The columns COPY writes, in table order (loaded_at is left to its default: the load's now()). */
export function copyColumns(dimensions: readonly Dimension[]): string[] {
  return ['period_start', 'period_end', ...dimensions, ...COUNTERS, 'load_id', 'account'];
}

/** The expected table of a definition: report_<name>, or `table` (a later version; indexes named after it). */
export function tableSpec(
  report: Pick<ReportJob, 'name' | 'dimensions'>,
  table: string = reportTable(report.name),
): sql.TableSpec {
  const columns: sql.ColumnSpec[] = [
    { name: 'period_start', type: 'date', notNull: true },
    { name: 'period_end', type: 'date', notNull: true },
    ...report.dimensions.map((d) => ({ name: d, type: dimensionType(d), notNull: true })),
    ...COUNTERS.map((c) => ({ name: c, type: 'bigint', notNull: true })),
    { name: 'load_id', type: 'bigint', notNull: true },
    { name: 'loaded_at', type: 'timestamp with time zone', notNull: true, default: 'now()' },
    // Last, DEFAULT_ACCOUNT for a single-account deployment.
    { name: 'account', type: 'text', notNull: true, default: `'${DEFAULT_ACCOUNT}'::text` },
  ];
  // The account leads (Citus' distribution column), then the period, which a partitioned table's keys must
  // include. Text goes in by md5; a collision fails a load, never merges rows.
  const indexes: sql.IndexSpec[] = [
    {
      name: derivedName(`${table}_key`),
      columns: ['account', 'period_start', 'period_end', ...report.dimensions],
      hashed: report.dimensions.filter((d) => dimensionType(d) === 'text'),
      unique: true,
    },
    ...report.dimensions
      .filter((d) => d.endsWith('_id'))
      .map((d) => ({ name: derivedName(`${table}_${d}`), columns: [d], hashed: [], unique: false })),
  ];
  return { table, columns, indexes, partitioned: true };
}

/** The index's keys as Postgres shows them (pg_get_indexdef of each key): how drift is detected. */
export function indexKeys(ix: sql.IndexSpec): string[] {
  return ix.columns.map((c) => (ix.hashed.includes(c) ? `(md5(${c})::uuid)` : c));
}

/** What differs between expected and found columns, one line each; order counts (COPY relies on it). */
export function columnDifferences(
  expected: readonly sql.ColumnSpec[],
  found: readonly Pick<sql.FoundColumn, 'name' | 'type' | 'notNull'>[],
): string[] {
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

export interface EnsureResult {
  readonly created: readonly string[];
  readonly unchanged: readonly string[];
  readonly indexesAdded: readonly string[];
  /** report_* tables of the schema with no definition any more: kept as they are. */
  readonly orphaned: readonly string[];
  /** Reports whose definition loads into a version their stable name does not show yet. */
  readonly evolving: readonly Evolving[];
}

/** Creates missing report_<name> tables in one transaction; SchemaRefusal if one differs from its spec. */
export async function ensureReportTables(
  client: ClientBase,
  wh: Warehouse,
  reports: readonly ReportJob[],
  options: { readonly autoSwap?: boolean } = {},
): Promise<EnsureResult> {
  refuseNameClashes(reports);
  const { schema } = wh;
  const created: string[] = [];
  const unchanged: string[] = [];
  const indexesAdded: string[] = [];
  const evolving: Evolving[] = [];
  const reportTables = async () =>
    new Set((await rowsOf(client, sql.reportTables(schema))).map((r) => r.name));
  await withTransaction(client, async () => {
    // Two migrate runs serialize on migrate's own lock; this one guards direct callers too.
    await execute(client, sql.lock(`adops-report-tables:${schema}`));
    const existing = await reportTables();
    for (const report of reports) {
      // A change of dimensions is not drift: it starts a new version of the table (evolution).
      const version = await versionFor(client, wh, report, options.autoSwap ?? true);
      if (version.evolving !== undefined) evolving.push(version.evolving);
      const spec = tableSpec(report, version.table);
      if (!existing.has(spec.table)) {
        const ddl = sql.createTable(schema, spec);
        for (const st of [ddl.table, ...ddl.indexes]) await execute(client, st);
        created.push(spec.table);
        continue;
      }
      const differences = columnDifferences(
        spec.columns,
        await rowsOf(client, sql.columnsOf(schema, spec.table)),
      );
      const indexes = new Map(
        (await rowsOf(client, sql.indexesOf(schema, spec.table))).map((r) => [r.name, r]),
      );
      for (const ix of spec.indexes) {
        const found = indexes.get(ix.name);
        // Column differences already explain a changed key; only a lone index change is news.
        if (found === undefined || differences.length > 0) continue;
        const keys = indexKeys(ix);
        if (found.unique === ix.unique && found.keys.join(',') === keys.join(',')) continue;
        differences.push(
          `index ${ix.name} is ${found.unique ? 'unique ' : ''}on (${found.keys.join(', ')}), expected ${ix.unique ? 'unique ' : ''}on (${keys.join(', ')})`,
        );
      }
      const table = `${schema}.${spec.table}`;
      if (differences.length > 0)
        throw new SchemaRefusal(
          `${table} does not match ${report.file} (dimensions: ${report.dimensions.join(', ')}):\n` +
            differences.map((d) => `  - ${d}`).join('\n') +
            `\nNothing was changed. To proceed, either give the changed definition a new name (a new table is created and ` +
            `the old one keeps its history), or migrate the table yourself (e.g. ALTER TABLE ${table} RENAME TO ${spec.table}_old) ` +
            `and run adops migrate again.`,
        );
      // A dropped index is only lost speed: re-adding it is safe, unlike changing columns.
      for (const ix of spec.indexes.filter((i) => !indexes.has(i.name))) {
        await execute(client, sql.createIndex(schema, spec.table, ix));
        indexesAdded.push(ix.name);
      }
      unchanged.push(spec.table);
    }
  });
  const names = new Set(reports.map((r) => r.name));
  const defined = new Set([
    ...reports.map((r) => tableSpec(r).table),
    ...(await readVersions(wh, undefined, client)).filter((v) => names.has(v.report)).map((v) => v.table),
  ]);
  const orphaned = [...(await reportTables())].filter((t) => !defined.has(t) && !FIXED_TABLES.has(t));
  return { created, unchanged, indexesAdded, orphaned, evolving };
}

/** ConfigError when a table takes another report's index name: tables and indexes share one namespace. */
function refuseNameClashes(reports: readonly ReportJob[]): void {
  const indexOwner = new Map<string, ReportJob>();
  for (const report of reports) for (const ix of tableSpec(report).indexes) indexOwner.set(ix.name, report);
  for (const report of reports) {
    const table = tableSpec(report).table;
    const owner = indexOwner.get(table);
    if (owner === undefined) continue;
    throw new ConfigError(
      `${report.file}: name: "${report.name}": its table ${table} has the name of an index of report ` +
        `${owner.name} (${owner.file}); rename one of the two reports`,
      `${report.file}: name`,
    );
  }
}

/** Tables of the fixed schema (sql/001_baseline.sql) that share the report_ prefix. */
const FIXED_TABLES = new Set([
  'report_loads',
  'report_totals',
  'report_raw',
  'report_raw_parts',
  'report_versions',
]);
