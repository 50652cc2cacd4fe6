// The BI views over the report tables: a shipped view of sql/views per report, or one generated
// from the definition, and each view's per-day companion bi_<name>_daily, made by `adops migrate`.
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ClientBase } from 'pg';
import { packageRoot } from '../platform/config/files.js';
import { ident, qualified, reportTable, sqlState } from '../platform/pg/handle.js';
import { COUNTERS } from '../platform/config/dimensions.js';

/** A BI view file of sql/views: `<report name>.sql`, with the report columns it reads. */
export interface ViewFile {
  readonly report: string;
  readonly sql: string;
  /** Dimension columns the view reads, from its `-- requires: a, b` header line. */
  readonly requires: readonly string[];
}

/** What ensureViews did for each view file. */
export interface ViewOutcome {
  readonly report: string;
  /**
   * `generated`: the report has no view file, so its view was built from its table's columns;
   * `refused`: its view file reads columns the table lacks (`reads`) or leaves out dimensions of the
   * serving version (`missing`), so the generated view stands in its place.
   */
  readonly status: 'created' | 'generated' | 'refused' | 'no-report' | 'no-table';
  /** The dimensions the view file's view lacks (refused). */
  readonly missing?: readonly string[];
  /** The columns the view file reads (its `-- requires:` line) that the table lacks (refused). */
  readonly reads?: readonly string[];
  /** The serving version of the report, whose table report_<name> shows (refused). */
  readonly version?: number;
  /** The view the file makes (refused). */
  readonly view?: string;
}

/** The line `adops migrate`, `adops evolve --swap` and a worker's swap give a refused view file. */
export function refusedViewLine(o: ViewOutcome): string {
  const table = `${reportTable(o.report)}${o.version === undefined ? '' : ` (version ${o.version})`}`;
  const view = o.view ?? `bi_${o.report}`;
  const plural = (list: readonly string[], one: string, many: string) =>
    `${list.length === 1 ? one : many} ${list.join(', ')}`;
  const why =
    o.reads !== undefined && o.reads.length > 0
      ? `it reads ${plural(o.reads, 'the column', 'the columns')}, which ${table} lacks`
      : `${view} lacks ${plural(o.missing ?? [], 'the dimension', 'the dimensions')} of ${table}`;
  return `refused sql/views/${o.report}.sql: ${why}; generated bi_${o.report} instead (every row of a BI view must be told apart by its dimensions: add them to the file)`;
}

/** Parses one view file; pure, so the header convention is unit tested. */
export function parseViewFile(file: string, sql: string): ViewFile {
  const requiresLine = /^--\s*requires:\s*(.+)$/m.exec(sql);
  const requires =
    requiresLine?.[1]
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '') ?? [];
  return { report: basename(file, '.sql'), sql, requires };
}

/** One column of a table or view as found, in order: its type as format_type() names it. */
export interface FoundColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly comment: string | null;
}

/** The columns of relation `name` in order; none when it does not exist. */
export async function columnsOf(client: ClientBase, schema: string, name: string): Promise<FoundColumn[]> {
  const { rows } = await client.query<FoundColumn>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
            col_description(a.attrelid, a.attnum) AS comment
       FROM pg_attribute a
      WHERE a.attrelid = to_regclass(quote_ident($1) || '.' || quote_ident($2))
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [schema, name],
  );
  return rows;
}

/** The column names of `name`, or undefined when it does not exist. */
async function columnNames(client: ClientBase, schema: string, name: string): Promise<string[] | undefined> {
  const columns = await columnsOf(client, schema, name);
  return columns.length === 0 ? undefined : columns.map((c) => c.name);
}

/** Runs `work` with the search path set to `schema` (view files use unqualified names), then restores it. */
async function inSchema<T>(client: ClientBase, schema: string, work: () => Promise<T>): Promise<T> {
  const { rows } = await client.query<{ path: string }>('SELECT current_setting($1) AS path', [
    'search_path',
  ]);
  await client.query(`SET search_path TO ${ident(schema)}, public`);
  try {
    return await work();
  } finally {
    // After an error inside a caller's transaction the restore itself fails; the caller's ROLLBACK
    // then undoes the SET anyway, and the original error is the one worth seeing.
    await client
      .query('SELECT set_config($1, $2, false)', ['search_path', rows[0]?.path ?? '"$user", public'])
      .catch(() => undefined);
  }
}

/**
 * Runs a CREATE OR REPLACE VIEW; when it renames, retypes or drops a column Postgres refuses (42P16)
 * and the views `drop` go first. A user's view built on ours then fails the DROP, naming itself.
 * Inside a transaction (migrate's, a swap's) the refusal is taken back to a savepoint, so the
 * transaction goes on.
 */
async function replaceView(client: ClientBase, sql: string, drop: readonly string[]): Promise<void> {
  const inTransaction = client.getTransactionStatus() === 'T';
  if (inTransaction) await client.query('SAVEPOINT adops_replace_view');
  try {
    await client.query(sql);
  } catch (error) {
    if (sqlState(error) !== '42P16' || drop.length === 0) throw error;
    if (inTransaction) await client.query('ROLLBACK TO SAVEPOINT adops_replace_view');
    for (const view of drop) await client.query(`DROP VIEW IF EXISTS ${ident(view)}`);
    await client.query(sql);
  }
  if (inTransaction) await client.query('RELEASE SAVEPOINT adops_replace_view');
}

/**
 * Creates the BI views of `reports`: a report's view file of sql/views when its table has the columns
 * the file reads and the view it makes carries every dimension of the serving version (report_<name>'s
 * columns), else (refused) or without a file the view generated from the table. Run it in a
 * transaction: a refused file's view is replaced within it, so no reader ever sees it. Not a numbered
 * migration: report tables come from the job definitions.
 */
export async function ensureViews(
  client: ClientBase,
  schema: string,
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
  await inSchema(client, schema, async () => {
    for (const entry of views) {
      const report = typeof entry === 'string' ? entry : entry.report;
      if (!wanted.has(report)) {
        outcomes.push({ report, status: 'no-report' });
        continue;
      }
      const columns = await columnNames(client, schema, reportTable(report));
      if (columns === undefined) {
        outcomes.push({ report, status: 'no-table' });
        continue;
      }
      const generated = generatedViewSql(report, columns);
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
        // A column of the dimension's name, and the view reads the dimension from the report: a
        // catalogue attribute of the same name (a campaign's ad_format) does not tell rows apart.
        const made = (await columnNames(client, schema, name)) ?? [];
        const read = await columnsRead(client, schema, name, reportTable(report));
        missing = dimensionsOf(columns).filter((d) => !made.includes(d) || !read.includes(d));
        if (missing.length === 0) {
          outcomes.push({ report, status: 'created' });
          continue;
        }
        // The file made a view of another name: it must not outlive the refusal.
        if (name !== `bi_${report}`) await client.query(`DROP VIEW IF EXISTS ${ident(name)}`);
      }
      await createView(client, generated);
      const version = await servingVersion(client, schema, report);
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

/** The columns of `table` that the view `view` reads (its rule's dependencies, as DROP COLUMN checks them). */
async function columnsRead(
  client: ClientBase,
  schema: string,
  view: string,
  table: string,
): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT DISTINCT a.attname AS name
       FROM pg_rewrite w
       JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid AND d.refclassid = 'pg_class'::regclass
       JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
      WHERE w.ev_class = to_regclass(quote_ident($1) || '.' || quote_ident($2))
        AND d.refobjid = to_regclass(quote_ident($1) || '.' || quote_ident($3))`,
    [schema, view, table],
  );
  return rows.map((r) => r.name);
}

/** The view a CREATE OR REPLACE VIEW statement makes. */
function viewName(sql: string): string | undefined {
  return /CREATE\s+OR\s+REPLACE\s+VIEW\s+"?([a-z_][a-z0-9_]*)/i.exec(sql)?.[1];
}

/** Runs a view's CREATE OR REPLACE VIEW; the per-day companion reads the view, and ensureDailyViews
 * makes it again right after. */
async function createView(client: ClientBase, sql: string): Promise<void> {
  const name = viewName(sql);
  await replaceView(client, sql, name === undefined ? [] : [`${name}_daily`, name]);
}

/** The number of the version report_<name> serves, when report_versions knows it. */
async function servingVersion(
  client: ClientBase,
  schema: string,
  report: string,
): Promise<number | undefined> {
  const { rows } = await client.query<{ version: number }>(
    `SELECT version FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND state = 'serving'`,
    [report],
  );
  return rows[0]?.version;
}

/** Columns of every report table that are not dimensions. */
const NOT_DIMENSIONS: ReadonlySet<string> = new Set([
  'period_start',
  'period_end',
  ...COUNTERS,
  'load_id',
  'loaded_at',
  'account',
]);

/** The dimension columns of a report table's `columns`, in order. Pure. */
export function dimensionsOf(columns: readonly string[]): string[] {
  return columns.filter((c) => !NOT_DIMENSIONS.has(c));
}

/** The BI view of a report with no file in sql/views/, from its table's columns as they exist:
 * campaign and creative names joined when it has those dimensions, and the two rates. Pure. */
export function generatedViewSql(report: string, tableColumns: readonly string[]): string {
  const dims = dimensionsOf(tableColumns);
  // A catalogue attribute of the same name as a dimension (ad_format) gives way to the dimension.
  const attribute = (expr: string, as: string) => (dims.includes(as) ? [] : [expr]);
  const hasCampaign = dims.includes('campaign_id');
  const hasCreative = dims.includes('creative_id');
  const select = [
    'r.account',
    'r.period_start',
    'r.period_end',
    ...dims.map((d) => `r.${ident(d)}`),
    ...(hasCampaign ? ['c.name AS campaign_name', ...attribute('c.ad_format', 'ad_format')] : []),
    ...(hasCreative ? ['k.name AS creative_name', ...attribute('k.ad_type', 'ad_type')] : []),
    ...COUNTERS.map((c) => `r.${ident(c)}`),
    ...Object.entries(RATES).map(
      ([rate, [num, den]]) => `r.${num}::double precision / NULLIF(r.${den}, 0) AS ${rate}`,
    ),
    'r.loaded_at',
  ];
  return [
    `-- Generated for report ${report}: it has no file in sql/views/.`,
    `CREATE OR REPLACE VIEW ${ident(`bi_${report}`)} AS`,
    `SELECT\n  ${select.join(',\n  ')}`,
    `FROM ${ident(reportTable(report))} r`,
    ...(hasCampaign
      ? ['LEFT JOIN campaigns c ON c.account = r.account AND c.campaign_id = r.campaign_id']
      : []),
    ...(hasCreative
      ? ['LEFT JOIN creatives k ON k.account = r.account AND k.creative_id = r.creative_id']
      : []),
  ].join('\n');
}

/** What ensureDailyViews did for one report. */
export interface DailyViewOutcome {
  readonly report: string;
  readonly view: string;
  /** `no-day`: a week or month period without the day dimension; `name-taken`: another report's bi_ view has the name. */
  readonly status: 'created' | 'no-view' | 'no-day' | 'name-taken';
}

/** Creates bi_<name>_daily over each report's bi_<name> view (dailyViewSql); call it after ensureViews. */
export async function ensureDailyViews(
  client: ClientBase,
  schema: string,
  reports: readonly { readonly name: string; readonly period?: 'day' | 'week' | 'month' }[],
): Promise<DailyViewOutcome[]> {
  const reportNames = new Set(reports.map((r) => r.name));
  const outcomes: DailyViewOutcome[] = [];
  await inSchema(client, schema, async () => {
    for (const report of reports) {
      const view = dailyViewName(report.name);
      const done = (status: DailyViewOutcome['status']) =>
        outcomes.push({ report: report.name, view, status });
      // bi_x_daily is also the bi_ view of a report named x_daily: that report keeps its name.
      if (reportNames.has(`${report.name}_daily`)) {
        done('name-taken');
        continue;
      }
      const columns = await columnNames(client, schema, `bi_${report.name}`);
      const sql = columns === undefined ? undefined : dailyViewSql(report.name, columns, report.period);
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

/** The rates of the BI views, each a numerator counter over a denominator counter. */
export const RATES: Readonly<Record<string, readonly [numerator: string, denominator: string]>> = {
  fill_rate: ['filled_impressions', 'ad_requests'],
  viewability_rate: ['viewable_impressions', 'measurable_impressions'],
};

/**
 * Columns finer than a day or implied by it: the companion drops them. year, month and weekday
 * follow from the day (join dim_date for them); hour and the period bounds are what is summed over.
 */
const TIME_COLUMNS: ReadonlySet<string> = new Set([
  'day',
  'hour',
  'period_start',
  'period_end',
  'year',
  'month',
  'weekday',
]);

const COUNTER_SET: ReadonlySet<string> = new Set(COUNTERS);

/** Name of the per-day companion of a report's BI view. */
export function dailyViewName(report: string): string {
  return `bi_${report}_daily`;
}

/**
 * bi_<name>_daily: bi_<name> summed per day, rates as ratios of the sums (averaging per-row rates
 * weighs a row of 10 requests like one of a million); undefined when rows have no day (no `day`
 * column and a longer period). Other columns are group keys; rates not in RATES are left out.
 */
export function dailyViewSql(
  report: string,
  viewColumns: readonly string[],
  period: 'day' | 'week' | 'month' | undefined,
): string | undefined {
  const has = new Set(viewColumns);
  const day = has.has('day')
    ? 'v.day'
    : period === 'day' && has.has('period_start')
      ? 'v.period_start AS day'
      : undefined;
  if (day === undefined) return undefined;
  const keys = viewColumns.filter(
    (c) => !TIME_COLUMNS.has(c) && !COUNTER_SET.has(c) && !c.endsWith('_rate') && c !== 'loaded_at',
  );
  const counters = COUNTERS.filter((c) => has.has(c));
  const rates = Object.entries(RATES).filter(
    ([rate, [num, den]]) => has.has(rate) && has.has(num) && has.has(den),
  );
  const select = [
    day,
    ...keys.map((k) => `v.${ident(k)}`),
    ...counters.map((c) => `sum(v.${ident(c)})::bigint AS ${ident(c)}`),
    ...rates.map(
      ([rate, [num, den]]) =>
        `sum(v.${ident(num)})::double precision / NULLIF(sum(v.${ident(den)}), 0) AS ${ident(rate)}`,
    ),
    ...(has.has('loaded_at') ? ['max(v.loaded_at) AS loaded_at'] : []),
  ];
  const groupBy = [day.replace(/ AS day$/, ''), ...keys.map((k) => `v.${ident(k)}`)];
  return [
    `-- Per-day companion of bi_${report}: counters summed per day, rates as ratios of sums.`,
    `CREATE OR REPLACE VIEW ${ident(dailyViewName(report))} AS`,
    `SELECT\n  ${select.join(',\n  ')}`,
    `FROM ${ident(`bi_${report}`)} v`,
    `GROUP BY ${groupBy.join(', ')}`,
  ].join('\n');
}
