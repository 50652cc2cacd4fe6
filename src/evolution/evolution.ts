// Report evolution: a building version of a report's table is loaded beside the serving one; once
// it covers every period the serving one had (and reconciles), the stable name report_<name> and
// the report's bi_ views switch to it in one transaction, so BI never sees a missing or half-built
// table. The old version stays until `adops evolve --drop-old`.
import { regrantBiViews } from '../schema/bi-role.js';
import { describeReportObjects } from '../schema/descriptions.js';
import type { ClientBase, Pool } from 'pg';
import type { Period } from '../platform/dates/periods.js';
import { type ViewOutcome, dailyViewName, ensureDailyViews, ensureViews } from '../schema/views.js';
import {
  type Warehouse,
  derivedName,
  ident,
  qualified,
  reportTable,
  withClient,
  withTransaction,
} from '../platform/pg/handle.js';
import { isDimension, type Dimension } from '../platform/config/dimensions.js';
import { tableSpec } from '../schema/report-tables.js';
import {
  buildingVersion,
  evolveLockKey,
  readVersions,
  sameDimensions,
  type ReportVersion,
} from '../schema/versions.js';
import { refusedViewLine } from '../schema/views.js';
import type { Logger } from '../platform/log/logger.js';
import type { ReportJob } from '../platform/config/jobs.js';
import type { PullQueue } from '../platform/queue/queues.js';
import type { Notify } from '../webhooks/events.js';
import { enqueuePulls, type EnqueuedPull } from '../schedule/enqueue.js';

/** The serving version's periods, how many the building one has loaded, and those missing, newest first. */
export interface Coverage {
  readonly report: string;
  readonly serving: ReportVersion;
  readonly building: ReportVersion;
  readonly periods: number;
  readonly covered: number;
  readonly missing: readonly Period[];
}

/** The coverage of `report`'s building version, or undefined when none is building. */
export async function coverage(
  db: Pick<ClientBase | Pool, 'query'>,
  schema: string,
  report: string,
): Promise<Coverage | undefined> {
  const versions = await readVersions(db, schema, report);
  const serving = versions.find((v) => v.state === 'serving');
  const building = versions.find((v) => v.state === 'building');
  if (serving === undefined || building === undefined) return undefined;
  const loads = qualified(schema, 'report_loads');
  // A period counts as covered once a load of the new shape replaced its rows and reconciled (or
  // could not for want of totals: only a mismatch blocks the switch), for every account that has it.
  const { rows } = await db.query<{ start: string; end: string; covered: boolean }>(
    `WITH old AS (
       SELECT DISTINCT account, period_start, period_end FROM ${loads}
        WHERE report = $1 AND dimensions = $2::text[] AND status = 'loaded'),
     new AS (
       SELECT DISTINCT account, period_start, period_end FROM ${loads}
        WHERE report = $1 AND dimensions = $3::text[] AND status = 'loaded'
          AND (reconciled IS NOT FALSE OR unreconciled_reason IN ('no totals', 'partial totals')))
     SELECT old.period_start::text AS start, old.period_end::text AS "end", bool_and(new.period_start IS NOT NULL) AS covered
       FROM old LEFT JOIN new USING (account, period_start, period_end)
      GROUP BY old.period_start, old.period_end
      ORDER BY old.period_start DESC, old.period_end DESC`,
    [report, serving.dimensions, building.dimensions],
  );
  return {
    report,
    serving,
    building,
    periods: rows.length,
    covered: rows.filter((r) => r.covered).length,
    missing: rows.filter((r) => !r.covered).map((r) => ({ start: r.start, end: r.end })),
  };
}

/** What a swap did: the report, the versions it switched from and to, and the report's view file if
 * it was refused (it lacks a dimension of the new version: the generated view serves instead). */
export type Swapped = {
  readonly report: string;
  readonly from: number;
  readonly to: number;
  readonly refused: readonly ViewOutcome[];
};

/**
 * Switches `report`'s stable name and bi_ views to its building version in one transaction, when
 * it covers every period (or `force`). The first swap renames version 1 to report_<name>__v1 and
 * makes report_<name> a view; readers block for the moment and never see an error or an empty view.
 */
export async function swapVersion(
  client: ClientBase,
  schema: string,
  report: { readonly name: string; readonly period?: 'day' | 'week' | 'month' },
  options: { readonly force?: boolean } = {},
): Promise<Swapped | undefined> {
  return withTransaction(client, async () => {
    // Exclusive: waits out the loads in flight (each holds it shared), so none writes a version
    // this swap retires after it read the version as current.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [evolveLockKey(schema, report.name)]);
    const state = await coverage(client, schema, report.name);
    if (state === undefined) return undefined;
    if (state.missing.length > 0 && options.force !== true) return undefined;
    const { serving, building } = state;
    const stable = reportTable(report.name);
    // Our own views over the stable name go first; ensureViews makes them again below.
    await client.query(`DROP VIEW IF EXISTS ${qualified(schema, dailyViewName(report.name))}`);
    await client.query(`DROP VIEW IF EXISTS ${qualified(schema, `bi_${report.name}`)}`);
    if (serving.table === stable) {
      // Version 1 is the physical report_<name>: it keeps its rows under a versioned name.
      const renamed = derivedName(`${stable}__v${serving.version}`);
      const dimensions = serving.dimensions.filter(isDimension);
      await renameTable(client, schema, { name: report.name, dimensions }, stable, renamed);
      await client.query(
        `UPDATE ${qualified(schema, 'report_versions')} SET table_name = $3 WHERE report = $1 AND version = $2`,
        [report.name, serving.version, renamed],
      );
    } else {
      // RESTRICT: a user's own view on the stable name must be moved by its owner, not dropped.
      await client.query(`DROP VIEW ${qualified(schema, stable)}`);
    }
    await client.query(
      `CREATE VIEW ${qualified(schema, stable)} AS SELECT * FROM ${qualified(schema, building.table)}`,
    );
    // Two statements: the one-serving-version index is checked row by row.
    const versions = qualified(schema, 'report_versions');
    await client.query(`UPDATE ${versions} SET state = 'retired' WHERE report = $1 AND version = $2`, [
      report.name,
      serving.version,
    ]);
    await client.query(
      `UPDATE ${versions} SET state = 'serving', swapped_at = now() WHERE report = $1 AND version = $2`,
      [report.name, building.version],
    );
    const views = await ensureViews(client, schema, [report]);
    await ensureDailyViews(client, schema, [report]);
    await describeReportObjects(client, schema, [report]);
    await regrantBiViews(client, schema);
    const refused = views.filter((v) => v.status === 'refused');
    return { report: report.name, from: serving.version, to: building.version, refused };
  });
}

/** Renames version `dimensions`' table and the indexes named after it (as tableSpec names them, within
 * 63 bytes), so a later version can never collide. */
async function renameTable(
  client: ClientBase,
  schema: string,
  report: { readonly name: string; readonly dimensions: readonly Dimension[] },
  from: string,
  to: string,
): Promise<void> {
  await client.query(`ALTER TABLE ${qualified(schema, from)} RENAME TO ${ident(to)}`);
  const renamed = new Map(
    zip(tableSpec(report, from).indexes, tableSpec(report, to).indexes).map(([a, b]) => [a.name, b.name]),
  );
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = $1::regclass`,
    [qualified(schema, to)],
  );
  for (const { name } of rows) {
    const next =
      renamed.get(name) ??
      (name.startsWith(`${from}_`) ? derivedName(`${to}_${name.slice(from.length + 1)}`) : name);
    if (next !== name) await client.query(`ALTER INDEX ${qualified(schema, name)} RENAME TO ${ident(next)}`);
  }
}

/** Pairs of the items at the same place in `a` and `b` (as many as the shorter has). */
function zip<A, B>(a: readonly A[], b: readonly B[]): Array<[A, B]> {
  return a.slice(0, b.length).map((x, i) => [x, b[i] as B]);
}

/** Swaps `report` when its building version is complete and auto-swaps: called after each of its loads. */
export async function swapWhenCovered(
  wh: Warehouse,
  report: { readonly name: string; readonly period?: 'day' | 'week' | 'month' },
): Promise<Swapped | undefined> {
  const { pool, schema } = wh;
  const building = (await readVersions(pool, schema, report.name)).find((v) => v.state === 'building');
  if (building === undefined || !building.autoSwap) return undefined;
  // Checked first without the lock: the swap's exclusive lock waits for every load of the report
  // in flight, which only the one call that can swap should do.
  const state = await coverage(pool, schema, report.name);
  if (state === undefined || state.missing.length > 0) return undefined;
  return withClient(pool, (client) => swapVersion(client, schema, report));
}

/** Drops the tables of `report`'s retired versions; returns their names. */
export async function dropRetired(client: ClientBase, schema: string, report: string): Promise<string[]> {
  return withTransaction(client, async () => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [evolveLockKey(schema, report)]);
    const retired = (await readVersions(client, schema, report)).filter((v) => v.state === 'retired');
    for (const v of retired) {
      await client.query(`DROP TABLE IF EXISTS ${qualified(schema, v.table)}`);
      await client.query(
        `DELETE FROM ${qualified(schema, 'report_versions')} WHERE report = $1 AND version = $2`,
        [report, v.version],
      );
    }
    return retired.map((v) => v.table);
  });
}

/** Enqueues every missing period of each coverage, newest first. */
export async function enqueueEvolution(
  queue: PullQueue,
  coverages: readonly Coverage[],
): Promise<EnqueuedPull[]> {
  const pulls = coverages.flatMap((c) =>
    c.missing.map((period) => ({ report: c.report, period, version: c.building.version })),
  );
  pulls.sort((a, b) => (a.period.start < b.period.start ? 1 : a.period.start > b.period.start ? -1 : 0));
  return enqueuePulls(queue, pulls);
}

/**
 * A function to call after each load: an evolving report's stable views switch to its building
 * version once it covers every period the old one had; a load in the old shape (its definition read
 * just before the change) is pulled again in the new. A failure is logged, never fails the pull.
 */
export function evolutionHook(
  wh: Warehouse,
  logger: Logger,
  notify: Notify,
  pulls: PullQueue,
): (report: ReportJob, period: Period, account?: string) => Promise<void> {
  return async (report, period, account) => {
    try {
      // One query per load; a report that is not evolving ends here.
      const next = await buildingVersion(wh, report.name);
      if (next === undefined) return;
      if (!sameDimensions(next.dimensions, report.dimensions)) {
        await enqueuePulls(pulls, [
          {
            report: report.name,
            period,
            version: next.version,
            ...(account === undefined ? {} : { account }),
          },
        ]);
        return;
      }
      const swapped = await swapWhenCovered(wh, report);
      if (swapped === undefined) return;
      const { refused, ...switched } = swapped;
      logger.info(switched, `report ${report.name} now serves version ${swapped.to} (was ${swapped.from})`);
      for (const v of refused) logger.warn({ report: report.name }, refusedViewLine(v));
      notify({
        type: 'evolution.swapped',
        report: swapped.report,
        from_version: swapped.from,
        to_version: swapped.to,
      });
    } catch (error) {
      logger.warn({ err: error, report: report.name }, 'could not switch the report to its new version');
    }
  };
}
