// The BI views over the report tables (a view file of sql/views, or generated) and their bi_<name>_daily.
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ClientBase } from 'pg';
import { packageRoot } from '../platform/config/files.js';
import type { Warehouse } from '../platform/pg/handle.js';
import { execute, firstRow, reportTable, rowsOf, sqlState, statement } from '../platform/pg/handle.js';
import { columnsOf } from './sql.js';
import { readVersions } from './versions.js';
import * as vsql from './views-sql.js';

/** A BI view file of sql/views: `<report name>.sql`, with the report columns it reads. */
export interface ViewFile {
  readonly report: string;
  readonly sql: string;
  /** Dimension columns the view reads, from its `-- requires: a, b` header line. */
  readonly requires: readonly string[];
}

export interface ViewOutcome {
  readonly report: string;
  /** `generated`: no view file; `refused`: its file reads columns the table lacks or misses dimensions. */
  readonly status: 'created' | 'generated' | 'refused' | 'no-report' | 'no-table';
  // Refused only: dimensions its view lacks, columns it reads the table lacks, the serving version, its view.
  readonly missing?: readonly string[];
  readonly reads?: readonly string[];
  readonly version?: number;
  readonly view?: string;
}

/** The line `adops migrate`, `adops evolve --swap` and a worker's swap give a refused view file. */
export function refusedViewLine(o: ViewOutcome): string {
  const table = `${reportTable(o.report)}${o.version === undefined ? '' : ` (version ${o.version})`}`;
  const view = o.view ?? `bi_${o.report}`;
  const plural = (list: readonly string[], one: string, many: string) =>
    `${list.length === 1 ? one : many} ${list.join(', ')}`;
  const dims = (o.missing ?? []).filter((c) => c !== 'provisional');
  const why =
    o.reads !== undefined && o.reads.length > 0
      ? `it reads ${plural(o.reads, 'the column', 'the columns')}, which ${table} lacks`
      : dims.length > 0
        ? `${view} lacks ${plural(dims, 'the dimension', 'the dimensions')} of ${table}`
        : `${view} lacks the column provisional`;
  const need =
    dims.length > 0 || why.startsWith('it reads')
      ? 'every row of a BI view must be told apart by its dimensions: add them to the file'
      : `every BI view says which rows are provisional: add ${vsql.PROVISIONAL} to the file`;
  return `refused sql/views/${o.report}.sql: ${why}; generated bi_${o.report} instead (${need})`;
}

/** Parses one view file; pure, so the header convention is unit tested. */
export function parseViewFile(file: string, sql: string): ViewFile {
  const requires = (/^--\s*requires:\s*(.+)$/m.exec(sql)?.[1] ?? '').split(',').map((s) => s.trim());
  return { report: basename(file, '.sql'), sql, requires: requires.filter((s) => s !== '') };
}

async function columnNames(client: ClientBase, wh: Warehouse, name: string): Promise<string[] | undefined> {
  const columns = await rowsOf(client, columnsOf(wh.schema, name));
  return columns.length === 0 ? undefined : columns.map((c) => c.name);
}

/** Runs `work` with the search path set to the warehouse's schema, then restores it. */
export async function inSchema<T>(client: ClientBase, wh: Warehouse, work: () => Promise<T>): Promise<T> {
  const before = await firstRow(client, vsql.searchPath());
  await execute(client, vsql.setSearchPath(wh.schema));
  try {
    return await work();
  } finally {
    // Inside a caller's failed transaction the restore fails; its ROLLBACK undoes the SET anyway.
    await execute(client, vsql.searchPath(before?.path ?? '"$user", public')).catch(() => undefined);
  }
}

/** Runs a CREATE OR REPLACE VIEW, dropping `drop` first on 42P16; a savepoint keeps a transaction going. */
export async function replaceView(client: ClientBase, sql: string, drop: readonly string[]): Promise<void> {
  const inTransaction = client.getTransactionStatus() === 'T';
  if (inTransaction) await client.query('SAVEPOINT adops_replace_view');
  try {
    await execute(client, statement(sql));
  } catch (error) {
    if (sqlState(error) !== '42P16' || drop.length === 0) throw error;
    if (inTransaction) await client.query('ROLLBACK TO SAVEPOINT adops_replace_view');
    for (const view of drop) await execute(client, vsql.dropView(view));
    await execute(client, statement(sql));
  }
  if (inTransaction) await client.query('RELEASE SAVEPOINT adops_replace_view');
}

/** Creates the BI views of `reports` (a fitting view file, else generated); run it in a transaction. */
export async function ensureViews(
  client: ClientBase,
  wh: Warehouse,
  reports: readonly { readonly name: string }[],
): Promise<ViewOutcome[]> {
  const wanted = new Set(reports.map((r) => r.name));
  const outcomes: ViewOutcome[] = [];
  const dir = join(packageRoot(), 'sql', 'views');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => parseViewFile(f, readFileSync(join(dir, f), 'utf8')));
  const withFile = new Set(files.map((f) => f.report));
  // Reports without a file come after the files, their view generated from the table's columns.
  const views: Array<ViewFile | string> = [...files, ...[...wanted].filter((name) => !withFile.has(name))];
  await inSchema(client, wh, async () => {
    for (const entry of views) {
      const report = typeof entry === 'string' ? entry : entry.report;
      if (!wanted.has(report)) {
        outcomes.push({ report, status: 'no-report' });
        continue;
      }
      const columns = await columnNames(client, wh, reportTable(report));
      if (columns === undefined) {
        outcomes.push({ report, status: 'no-table' });
        continue;
      }
      const generated = vsql.generatedViewSql(report, columns);
      const view = typeof entry === 'string' ? undefined : entry;
      if (view === undefined) {
        await createView(client, generated);
        outcomes.push({ report, status: 'generated' });
        continue;
      }
      const reads = view.requires.filter((c) => !columns.includes(c));
      const name = viewName(view.sql) ?? `bi_${report}`;
      let missing: string[] = [];
      if (reads.length === 0) {
        await createView(client, view.sql);
        // A catalogue attribute of a dimension's name (a campaign's ad_format) does not tell rows apart.
        const made = (await columnNames(client, wh, name)) ?? [];
        const read = (await rowsOf(client, vsql.columnsRead(wh.schema, name, reportTable(report)))).map(
          (r) => r.name,
        );
        missing = vsql.dimensionsOf(columns).filter((d) => !made.includes(d) || !read.includes(d));
        if (!made.includes('provisional')) missing.push('provisional');
        if (missing.length === 0) {
          outcomes.push({ report, status: 'created' });
          continue;
        }
        // The file made a view of another name: it must not outlive the refusal.
        if (name !== `bi_${report}`) await execute(client, vsql.dropView(name));
      }
      await createView(client, generated);
      const version = (await readVersions(wh, report, client)).find((v) => v.state === 'serving')?.version;
      outcomes.push({
        report,
        status: 'refused',
        view: name,
        ...(reads.length > 0 ? { reads } : { missing }),
        ...(version === undefined ? {} : { version }),
      });
    }
  });
  return outcomes;
}

function viewName(sql: string): string | undefined {
  return /CREATE\s+OR\s+REPLACE\s+VIEW\s+"?([a-z_][a-z0-9_]*)/i.exec(sql)?.[1];
}

/** Runs a view's CREATE OR REPLACE VIEW; ensureDailyViews makes the companion again right after. */
async function createView(client: ClientBase, sql: string): Promise<void> {
  const name = viewName(sql);
  await replaceView(client, sql, name === undefined ? [] : [`${name}_daily`, name]);
}

export interface DailyViewOutcome {
  readonly report: string;
  readonly view: string;
  /** `no-day`: a week or month period without the day dimension; `name-taken`: another report's bi_ view has the name. */
  readonly status: 'created' | 'no-view' | 'no-day' | 'name-taken';
}

/** Creates bi_<name>_daily over each report's bi_<name> view (vsql.dailyViewSql); call it after ensureViews. */
export async function ensureDailyViews(
  client: ClientBase,
  wh: Warehouse,
  reports: readonly { readonly name: string; readonly period?: 'day' | 'week' | 'month' }[],
): Promise<DailyViewOutcome[]> {
  const reportNames = new Set(reports.map((r) => r.name));
  const outcomes: DailyViewOutcome[] = [];
  await inSchema(client, wh, async () => {
    for (const report of reports) {
      const view = vsql.dailyViewName(report.name);
      const done = (status: DailyViewOutcome['status']) =>
        outcomes.push({ report: report.name, view, status });
      // bi_x_daily is also the bi_ view of a report named x_daily: that report keeps its name.
      if (reportNames.has(`${report.name}_daily`)) {
        done('name-taken');
        continue;
      }
      const columns = await columnNames(client, wh, `bi_${report.name}`);
      const sql = columns === undefined ? undefined : vsql.dailyViewSql(report.name, columns, report.period);
      if (sql === undefined) {
        done(columns === undefined ? 'no-view' : 'no-day');
        continue;
      }
      await replaceView(client, sql, [view]);
      done('created');
    }
  });
  return outcomes;
}
