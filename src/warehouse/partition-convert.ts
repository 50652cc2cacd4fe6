// Converts a report table made unpartitioned by an earlier release, without downtime, the way
// report evolution switches versions: a partitioned copy is built beside it while loads and BI go
// on, the periods loaded meanwhile are copied again under the report's conversion lock (which
// loads take shared, so they wait only for that moment), and the stable name report_<name> and the
// report's bi_ views switch to the copy in the same transaction. The old table is dropped then,
// once the copy is checked to hold as many rows.
import type { ClientBase } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { dependentViews, recreate, viewName } from './column-upgrades.js';
import { ensureDailyViews } from './catalogue/daily-views.js';
import { ensureViews } from './catalogue/views.js';
import { attachMonths, isPartitioned, monthsAhead, monthsBetween } from './partitions.js';
import { ident, qualified, reportTable, withTransaction } from './pg.js';
import { createIndexSql, createTableSql, tableSpec } from './table-spec.js';
import { readVersions, type ReportVersion } from './versions.js';

/** The advisory lock key a load takes shared and a conversion's switch exclusive. */
export function conversionLockKey(schema: string, report: string): string {
  return `adops-convert:${schema}.${report}`;
}

/** A table converted. */
export interface Converted {
  readonly report: string;
  readonly from: string;
  readonly to: string;
  readonly rows: number;
  /** Periods copied again because a load replaced them during the bulk copy. */
  readonly recopied: number;
}

/** The partitioned table that takes over version `version` of `report`: report_<name>__v<N>p. */
export function convertedTable(report: string, version: number): string {
  return `${reportTable(report)}__v${version}p`;
}

/**
 * Converts the serving table of each report of `reports` that is not partitioned yet. `client`
 * must not be inside a transaction (each step commits on its own).
 */
export async function convertUnpartitioned(
  client: ClientBase,
  schema: string,
  reports: readonly Pick<ReportJob, 'name' | 'period'>[],
  now: Date = new Date(),
): Promise<Converted[]> {
  const out: Converted[] = [];
  for (const report of reports) {
    const serving = (await readVersions(client, schema, report.name)).find((v) => v.state === 'serving');
    if (serving === undefined || (await isPartitioned(client, schema, serving.table))) continue;
    out.push(await convertTable(client, schema, report, serving, now));
  }
  return out;
}

async function convertTable(
  client: ClientBase,
  schema: string,
  report: Pick<ReportJob, 'name' | 'period'>,
  serving: ReportVersion,
  now: Date,
): Promise<Converted> {
  const old = qualified(schema, serving.table);
  const target = convertedTable(report.name, serving.version);
  const spec = tableSpec(
    { name: report.name, dimensions: serving.dimensions as ReportJob['dimensions'] },
    target,
  );
  const columns = spec.columns.map((c) => ident(c.name)).join(', ');
  // 1. The bulk copy, beside the old table: loads and readers go on (it holds only a read lock).
  await withTransaction(client, async () => {
    await client.query(`DROP TABLE IF EXISTS ${qualified(schema, target)}`); // an interrupted earlier run
    await client.query(createTableSql(schema, spec).table);
    const { rows } = await client.query<{ first: string | null; last: string | null }>(
      `SELECT min(period_start)::text AS first, max(period_start)::text AS last FROM ${old}`,
    );
    const span = rows[0]?.first == null ? [] : monthsBetween(rows[0].first, rows[0].last ?? rows[0].first);
    await attachMonths(client, schema, target, [...span, ...monthsAhead(now)]);
    await client.query(`INSERT INTO ${qualified(schema, target)} (${columns}) SELECT ${columns} FROM ${old}`);
    // Indexes after the rows: one sorted build per partition instead of row-by-row inserts.
    for (const ix of spec.indexes) await client.query(createIndexSql(schema, target, ix, ix.name));
  });
  // 2. The catch-up and the switch, with loads of this report held at their first statement.
  return withTransaction(client, async () => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      conversionLockKey(schema, report.name),
    ]);
    const recopied = await recopyChanged(client, schema, serving.table, target, columns);
    const counts = await client.query<{ old: string; new: string }>(
      `SELECT (SELECT count(*) FROM ${old})::text AS old, (SELECT count(*) FROM ${qualified(schema, target)})::text AS new`,
    );
    const c = counts.rows[0];
    if (c === undefined || c.old !== c.new)
      throw new Error(
        `converting ${schema}.${serving.table} to a partitioned table: the copy holds ${c?.new ?? '?'} rows, ` +
          `the table ${c?.old ?? '?'}; nothing was switched, run adops migrate again`,
      );
    await switchTo(client, schema, report, serving, target);
    return { report: report.name, from: serving.table, to: target, rows: Number(c.old), recopied };
  });
}

/**
 * Copies again the periods whose rows differ between `from` and `to` (a load replaced them after
 * the bulk copy read them): each load writes one load_id for all its rows, so a period's content
 * is told by its newest load_id and its row count. Returns how many periods were copied again.
 */
async function recopyChanged(
  client: ClientBase,
  schema: string,
  from: string,
  to: string,
  columns: string,
): Promise<number> {
  const source = qualified(schema, from);
  const target = qualified(schema, to);
  const { rows } = await client.query<{ start: string; end: string }>(
    `WITH o AS (SELECT period_start, period_end, max(load_id) AS m, count(*) AS c FROM ${source} GROUP BY 1, 2),
          n AS (SELECT period_start, period_end, max(load_id) AS m, count(*) AS c FROM ${target} GROUP BY 1, 2)
     SELECT period_start::text AS start, period_end::text AS "end"
       FROM o FULL JOIN n USING (period_start, period_end)
      WHERE o.m IS DISTINCT FROM n.m OR o.c IS DISTINCT FROM n.c`,
  );
  if (rows.length > 0)
    await attachMonths(
      client,
      schema,
      to,
      rows.map((r) => `${r.start.slice(0, 7)}-01`),
    );
  for (const r of rows) {
    await client.query(`DELETE FROM ${target} WHERE period_start = $1 AND period_end = $2`, [r.start, r.end]);
    await client.query(
      `INSERT INTO ${target} (${columns}) SELECT ${columns} FROM ${source} WHERE period_start = $1 AND period_end = $2`,
      [r.start, r.end],
    );
  }
  return rows.length;
}

/**
 * Points report_<name> and its version's record at `target`, then drops the old table. Every view
 * over report_<name> (its bi_ views and views users built on them) is dropped and made again from
 * its own definition, with its comment and grants, inside the transaction: readers wait for the
 * switch and then read the partitioned table. A materialized view, or a view of someone else's on
 * a versioned table, stops the switch, and the message says what to do.
 */
async function switchTo(
  client: ClientBase,
  schema: string,
  report: Pick<ReportJob, 'name' | 'period'>,
  serving: ReportVersion,
  target: string,
): Promise<void> {
  const stable = reportTable(report.name);
  const views = await dependentViews(client, qualified(schema, stable));
  const materialized = views.filter((v) => v.kind !== 'v');
  if (materialized.length > 0)
    throw new Error(
      `cannot convert ${schema}.${serving.table} to a partitioned table: materialized view ` +
        `${materialized.map(viewName).join(', ')} reads it. Nothing was changed: drop it, run adops migrate, then create it again`,
    );
  for (const view of [...views].reverse()) await client.query(`DROP VIEW ${viewName(view)}`);
  if (serving.table !== stable) await client.query(`DROP VIEW ${qualified(schema, stable)}`);
  try {
    await client.query(`DROP TABLE ${qualified(schema, serving.table)}`);
  } catch (error) {
    if ((error as { code?: string }).code !== '2BP01') throw error;
    throw new Error(
      `cannot convert ${schema}.${serving.table} to a partitioned table: a view of yours reads it by that name ` +
        `(${(error as Error).message}). Nothing was changed: base it on ${schema}.${stable} instead and run adops migrate again`,
      { cause: error },
    );
  }
  await client.query(
    `CREATE VIEW ${qualified(schema, stable)} AS SELECT * FROM ${qualified(schema, target)}`,
  );
  await client.query(
    `UPDATE ${qualified(schema, 'report_versions')} SET table_name = $3 WHERE report = $1 AND version = $2`,
    [report.name, serving.version, target],
  );
  for (const view of views) await recreate(client, view);
  // Views this release ships and the old table lacked (none, if it was migrated before).
  await ensureViews(client, schema, [report]);
  await ensureDailyViews(client, schema, [report]);
}
