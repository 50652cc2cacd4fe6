import type { ClientBase } from 'pg';
import { regrantBiViews } from '../bi-role.js';
import { describeReportObjects } from '../descriptions.js';
import { ident } from '../pg.js';
import { dailyViewName, dailyViewSql } from './daily-view.js';

/** What ensureDailyViews did for one report. */
export interface DailyViewOutcome {
  readonly report: string;
  readonly view: string;
  /**
   * `no-view`: the report has no bi_ view (see ensureViews); `no-day`: its rows have no day (a week
   * or month period without the day dimension); `name-taken`: another report's bi_ view has the name.
   */
  readonly status: 'created' | 'no-view' | 'no-day' | 'name-taken';
}

/**
 * Creates (CREATE OR REPLACE) bi_<name>_daily over each report's bi_<name> view (see dailyViewSql).
 * Call it after ensureViews, outside a transaction or inside the caller's; safe on every migrate.
 */
export async function ensureDailyViews(
  client: ClientBase,
  schema: string,
  reports: readonly { readonly name: string; readonly period?: 'day' | 'week' | 'month' }[],
): Promise<DailyViewOutcome[]> {
  const reportNames = new Set(reports.map((r) => r.name));
  const outcomes: DailyViewOutcome[] = [];
  const { rows } = await client.query<{ search_path: string }>('SELECT current_setting($1) AS search_path', [
    'search_path',
  ]);
  const previous = rows[0]?.search_path ?? '"$user", public';
  await client.query(`SET search_path TO ${ident(schema)}, public`);
  try {
    for (const report of reports) {
      const view = dailyViewName(report.name);
      // bi_x_daily is also the bi_ view of a report named x_daily: that report keeps its name.
      if (reportNames.has(`${report.name}_daily`)) {
        outcomes.push({ report: report.name, view, status: 'name-taken' });
        continue;
      }
      const columns = await viewColumns(client, schema, `bi_${report.name}`);
      if (columns === undefined) {
        outcomes.push({ report: report.name, view, status: 'no-view' });
        continue;
      }
      const sql = dailyViewSql(report.name, columns, report.period);
      if (sql === undefined) {
        outcomes.push({ report: report.name, view, status: 'no-day' });
        continue;
      }
      try {
        await client.query(sql);
      } catch (error) {
        // 42P16: the bi_ view's columns changed in a way CREATE OR REPLACE cannot follow.
        if ((error as { code?: string }).code !== '42P16') throw error;
        await client.query(`DROP VIEW IF EXISTS ${ident(view)}`);
        await client.query(sql);
      }
      outcomes.push({ report: report.name, view, status: 'created' });
    }
    await describeReportObjects(client, schema, reports);
    await regrantBiViews(client, schema);
  } finally {
    await client.query('SELECT set_config($1, $2, false)', ['search_path', previous]).catch(() => undefined);
  }
  return outcomes;
}

async function viewColumns(client: ClientBase, schema: string, view: string): Promise<string[] | undefined> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'v' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [schema, view],
  );
  return rows.length === 0 ? undefined : rows.map((r) => r.name);
}
