// Creates the report_<name> tables from the job definitions, and refuses to touch one that no
// longer matches its definition: the data in it is someone's history, never ours to drop.
import type { ClientBase } from 'pg';
import { ConfigError } from '../config/files.js';
import type { ReportJob } from '../config/jobs.js';
import { afterUpgrades, applyColumnUpgrades, pendingUpgrades } from './column-upgrades.js';
import { SchemaDriftError } from './errors.js';
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import {
  ACCOUNT_COLUMN,
  columnDifferences,
  createIndexSql,
  createTableSql,
  indexKeys,
  tableSpec,
  type FoundColumn,
  type IndexSpec,
  type TableSpec,
} from './table-spec.js';
import { ident, qualified, withTransaction } from './pg.js';
import { versionFor, type Evolving } from './version-plan.js';
import { readVersions } from './versions.js';

export interface EnsureResult {
  /** Tables created by this run. */
  readonly created: readonly string[];
  /** Tables that already matched their definition. */
  readonly unchanged: readonly string[];
  /** Indexes re-added to existing tables (someone had dropped them). */
  readonly indexesAdded: readonly string[];
  /** Unique indexes rebuilt in place to key long text values by their md5 (tables of older versions). */
  readonly indexesRebuilt: readonly string[];
  /** Columns converted in place by a known upgrade (column-upgrades.ts), e.g. `report_hourly.hour: text -> smallint`. */
  readonly upgraded: readonly string[];
  /** report_* tables of the schema with no definition any more: kept as they are. */
  readonly orphaned: readonly string[];
  /** Reports whose definition loads into a version their stable name does not show yet. */
  readonly evolving: readonly Evolving[];
}

/**
 * Creates report_<name> for each definition if absent, all in one transaction. Throws
 * SchemaDriftError (changing nothing) when an existing table differs from its definition.
 */
export async function ensureReportTables(
  client: ClientBase,
  schema: string,
  reports: readonly ReportJob[],
  options: { readonly autoSwap?: boolean } = {},
): Promise<EnsureResult> {
  refuseNameClashes(reports);
  const created: string[] = [];
  const unchanged: string[] = [];
  const indexesAdded: string[] = [];
  const indexesRebuilt: string[] = [];
  const upgraded: string[] = [];
  const evolving: Evolving[] = [];
  await withTransaction(client, async () => {
    // Two migrate runs serialize on migrate's own lock; this one guards direct callers too.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`adops-report-tables:${schema}`]);
    const existing = await reportTablesIn(client, schema);
    for (const report of reports) {
      // A change of dimensions is not drift: it starts a new version of the table (evolution).
      const version = await versionFor(client, schema, report, existing, options.autoSwap ?? true);
      if (version.evolving !== undefined) evolving.push(version.evolving);
      const spec = tableSpec(report, version.table);
      if (!existing.has(spec.table)) {
        const sql = createTableSql(schema, spec);
        await client.query(sql.table);
        for (const statement of sql.indexes) await client.query(statement);
        created.push(spec.table);
        continue;
      }
      // A table of a release before accounts: its rows are account `default`'s (sql/010_accounts.sql).
      let found = await columnsOf(client, schema, spec.table);
      if (!found.some((c) => c.name === ACCOUNT_COLUMN.name)) {
        await client.query(
          `ALTER TABLE ${qualified(schema, spec.table)} ADD COLUMN ${ident(ACCOUNT_COLUMN.name)} ${ACCOUNT_COLUMN.type} NOT NULL DEFAULT ${ACCOUNT_COLUMN.default ?? 'NULL'}`,
        );
        upgraded.push(`${spec.table}.account: added (existing rows: ${DEFAULT_ACCOUNT})`);
        found = await columnsOf(client, schema, spec.table);
      }
      // A known upgrade (hour text -> smallint) is not drift: it is applied once nothing else differs.
      const upgrades = pendingUpgrades(spec.columns, found);
      const differences = columnDifferences(spec.columns, afterUpgrades(found, upgrades));
      const indexes = await indexesOf(client, schema, spec.table);
      const outdated: IndexSpec[] = [];
      for (const ix of spec.indexes) {
        const found = indexes.get(ix.name);
        // Column differences already explain a changed key; only a lone index change is news.
        if (found === undefined || differences.length > 0) continue;
        const keys = indexKeys(ix);
        if (found.unique === ix.unique && found.keys.join(',') === keys.join(',')) continue;
        // The keys of earlier releases (on the text values themselves, or without the account): rebuilt below.
        if (found.unique === ix.unique && earlierKeys(ix).includes(found.keys.join(','))) outdated.push(ix);
        else
          differences.push(
            `index ${ix.name} is ${found.unique ? 'unique ' : ''}on (${found.keys.join(', ')}), expected ${ix.unique ? 'unique ' : ''}on (${keys.join(', ')})`,
          );
      }
      if (differences.length > 0) throw driftError(schema, report, spec, differences);
      if (upgrades.length > 0) {
        await applyColumnUpgrades(client, schema, spec.table, upgrades);
        for (const u of upgrades) upgraded.push(`${spec.table}.${u.column}: ${u.from} -> ${u.to}`);
      }
      for (const ix of outdated) {
        await rebuildIndex(client, schema, spec.table, ix);
        indexesRebuilt.push(ix.name);
      }
      // A dropped index is only lost speed: re-adding it is safe, unlike changing columns.
      const sql = createTableSql(schema, spec);
      for (const [i, ix] of spec.indexes.entries()) {
        if (indexes.has(ix.name)) continue;
        await client.query(sql.indexes[i] as string);
        indexesAdded.push(ix.name);
      }
      unchanged.push(spec.table);
    }
  });
  const names = new Set(reports.map((r) => r.name));
  const defined = new Set([
    ...reports.map((r) => tableSpec(r).table),
    ...(await readVersions(client, schema)).filter((v) => names.has(v.report)).map((v) => v.table),
  ]);
  const orphaned = [...(await reportTablesIn(client, schema))].filter(
    (t) => !defined.has(t) && !FIXED_TABLES.has(t),
  );
  return { created, unchanged, indexesAdded, indexesRebuilt, upgraded, orphaned, evolving };
}

/** The keys `ix` had in earlier releases, joined by commas: before md5 keys, and before accounts. */
function earlierKeys(ix: IndexSpec): string[] {
  const withoutAccount: IndexSpec = { ...ix, columns: ix.columns.filter((c) => c !== ACCOUNT_COLUMN.name) };
  return [ix.columns, indexKeys(withoutAccount), withoutAccount.columns].map((k) => k.join(','));
}

/**
 * Replaces an index in place: the new one is built beside the old under a temporary name, then
 * takes the old one's name, inside the caller's transaction (readers wait on the table's lock
 * for the build, and never see the table without its unique index).
 */
async function rebuildIndex(client: ClientBase, schema: string, table: string, ix: IndexSpec): Promise<void> {
  const temporary = `${ix.name}_new`;
  await client.query(`DROP INDEX IF EXISTS ${qualified(schema, temporary)}`);
  await client.query(createIndexSql(schema, table, ix, temporary));
  await client.query(`DROP INDEX ${qualified(schema, ix.name)}`);
  await client.query(`ALTER INDEX ${qualified(schema, temporary)} RENAME TO ${ident(ix.name)}`);
}

/**
 * Throws ConfigError when one report's table would take the name of another report's index
 * (report `daily` indexes report_daily_campaign_id, the table of a report `daily_campaign_id`):
 * Postgres keeps tables and indexes in one namespace, so the second CREATE would fail half-way.
 */
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

/** Tables of the fixed schema (sql/001_schema.sql) that share the report_ prefix. */
const FIXED_TABLES = new Set([
  'report_loads',
  'report_totals',
  'report_raw',
  'report_raw_parts',
  'report_versions',
]);

function driftError(
  schema: string,
  report: ReportJob,
  spec: TableSpec,
  differences: string[],
): SchemaDriftError {
  const table = `${schema}.${spec.table}`;
  return new SchemaDriftError(
    `${table} does not match ${report.file} (dimensions: ${report.dimensions.join(', ')}):\n` +
      differences.map((d) => `  - ${d}`).join('\n') +
      `\nNothing was changed. To proceed, either give the changed definition a new name (a new table is created and ` +
      `the old one keeps its history), or migrate the table yourself (e.g. ALTER TABLE ${table} RENAME TO ${spec.table}_old) ` +
      `and run adops migrate again.`,
    table,
    differences,
  );
}

async function reportTablesIn(client: ClientBase, schema: string): Promise<Set<string>> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname LIKE 'report\\_%'`,
    [schema],
  );
  return new Set(rows.map((r) => r.name));
}

async function columnsOf(client: ClientBase, schema: string, table: string): Promise<FoundColumn[]> {
  const { rows } = await client.query<{ name: string; type: string; not_null: boolean }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null
       FROM pg_attribute a
      WHERE a.attrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [schema, table],
  );
  return rows.map((r) => ({ name: r.name, type: r.type, notNull: r.not_null }));
}

async function indexesOf(
  client: ClientBase,
  schema: string,
  table: string,
): Promise<Map<string, { unique: boolean; keys: string[] }>> {
  // Each key as Postgres shows it: a column's name, or an expression such as (md5(x)::uuid).
  const { rows } = await client.query<{ name: string; unique: boolean; keys: string[] }>(
    `SELECT ic.relname AS name, i.indisunique AS unique,
            array(SELECT pg_get_indexdef(i.indexrelid, k.ord::int, true)
                    FROM generate_series(1, i.indnkeyatts) k(ord) ORDER BY k.ord)::text[] AS keys
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass`,
    [schema, table],
  );
  return new Map(rows.map((r) => [r.name, { unique: r.unique, keys: r.keys }]));
}
