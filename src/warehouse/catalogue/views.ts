import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ClientBase } from 'pg';
import { packageRoot } from '../../config/files.js';
import { ident, reportTable } from '../pg.js';
import { generatedViewSql } from './generated-view.js';

/** A BI view file of sql/views: `<report name>.sql`, with the report columns it reads. */
export interface ViewFile {
  readonly report: string;
  readonly file: string;
  readonly sql: string;
  /** Dimension columns the view reads, from its `-- requires: a, b` header line. */
  readonly requires: readonly string[];
}

/** What ensureViews did for each view file. */
export interface ViewOutcome {
  readonly report: string;
  /** `generated`: the report has no view file, so its view was built from its table's columns. */
  readonly status: 'created' | 'generated' | 'no-report' | 'no-table' | 'missing-columns';
  readonly missing?: readonly string[];
}

/** The shipped folder of BI view SQL. */
export function viewsDir(): string {
  return join(packageRoot(), 'sql', 'views');
}

/** Parses one view file; pure, so the header convention is unit tested. */
export function parseViewFile(file: string, sql: string): ViewFile {
  const requiresLine = /^--\s*requires:\s*(.+)$/m.exec(sql);
  const requires =
    requiresLine?.[1]
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '') ?? [];
  return { report: basename(file, '.sql'), file, sql, requires };
}

/** Reads every view file of `dir`, sorted by name. */
export function readViewFiles(dir: string = viewsDir()): ViewFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => parseViewFile(f, readFileSync(join(dir, f), 'utf8')));
}

/**
 * Creates (CREATE OR REPLACE) the BI views of the given reports whose report_<name> table exists
 * with the columns the view reads; a report without a view file gets a generated one (see
 * generatedViewSql). Views cannot live in the numbered migrations: the report
 * tables are created from the job definitions after those run. Call it after the report tables,
 * e.g. in migrate's afterMigrations, outside a transaction; safe to run on every migrate.
 */
export async function ensureViews(
  client: ClientBase,
  schema: string,
  reports: readonly { readonly name: string }[],
  options: { readonly dir?: string } = {},
): Promise<ViewOutcome[]> {
  const wanted = new Set(reports.map((r) => r.name));
  const outcomes: ViewOutcome[] = [];
  const { rows } = await client.query<{ search_path: string }>('SELECT current_setting($1) AS search_path', [
    'search_path',
  ]);
  const previous = rows[0]?.search_path ?? '"$user", public';
  // The view files use unqualified names, like the migrations: resolve them in the schema.
  await client.query(`SET search_path TO ${ident(schema)}, public`);
  try {
    const files = readViewFiles(options.dir);
    for (const view of files) {
      if (!wanted.has(view.report)) {
        outcomes.push({ report: view.report, status: 'no-report' });
        continue;
      }
      const columns = await tableColumns(client, schema, reportTable(view.report));
      if (columns === undefined) {
        outcomes.push({ report: view.report, status: 'no-table' });
        continue;
      }
      const missing = view.requires.filter((c) => !columns.includes(c));
      if (missing.length > 0) {
        outcomes.push({ report: view.report, status: 'missing-columns', missing });
        continue;
      }
      await createView(client, view);
      outcomes.push({ report: view.report, status: 'created' });
    }
    const withFile = new Set(files.map((f) => f.report));
    for (const name of wanted) {
      if (withFile.has(name)) continue;
      const columns = await tableColumns(client, schema, reportTable(name));
      if (columns === undefined) {
        outcomes.push({ report: name, status: 'no-table' });
        continue;
      }
      await createView(client, parseViewFile(`${name}.sql`, generatedViewSql(name, columns)));
      outcomes.push({ report: name, status: 'generated' });
    }
  } finally {
    // After an error inside a caller's transaction the restore itself fails; the caller's ROLLBACK
    // then undoes the SET anyway, and the original error is the one worth seeing.
    await client.query('SELECT set_config($1, $2, false)', ['search_path', previous]).catch(() => undefined);
  }
  return outcomes;
}

/**
 * CREATE OR REPLACE VIEW can only append columns; when a newer view file renames, retypes or drops
 * one, Postgres refuses (42P16) and the old view is dropped first. A view someone built on ours
 * then makes the DROP fail with a message naming it, which is the right moment to look.
 */
async function createView(client: ClientBase, view: ViewFile): Promise<void> {
  try {
    await client.query(view.sql);
  } catch (error) {
    const name = /CREATE\s+OR\s+REPLACE\s+VIEW\s+"?([a-z_][a-z0-9_]*)/i.exec(view.sql)?.[1];
    if ((error as { code?: string }).code !== '42P16' || name === undefined) throw error;
    // The per-day companion reads this view; ensureDailyViews re-creates it right after.
    await client.query(`DROP VIEW IF EXISTS ${ident(`${name}_daily`)}`);
    await client.query(`DROP VIEW IF EXISTS ${ident(name)}`);
    await client.query(view.sql);
  }
}

async function tableColumns(
  client: ClientBase,
  schema: string,
  table: string,
): Promise<string[] | undefined> {
  const { rows } = await client.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
      ORDER BY ordinal_position`,
    [schema, table],
  );
  return rows.length === 0 ? undefined : rows.map((r) => r.column_name);
}
