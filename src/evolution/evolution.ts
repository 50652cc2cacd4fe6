// Report evolution: a building version loads beside the serving one; covering every period, it takes over
// report_<name> and the bi_ views in one transaction (the old stays until `adops evolve --drop-old`).
import { regrantBiViews } from '../schema/bi-role.js';
import { asidePacing } from '../schema/pacing.js';
import { describeReportObjects } from '../schema/descriptions.js';
import type { ClientBase } from 'pg';
import type { Period } from '../platform/dates/periods.js';
import { type ViewOutcome, ensureDailyViews, ensureViews, refusedViewLine } from '../schema/views.js';
import { dailyViewName, dropView } from '../schema/views-sql.js';
import { lock, type ReportVersion } from '../schema/sql.js';
import type { Queryable, Warehouse } from '../platform/pg/handle.js';
import {
  derivedName,
  execute,
  reportTable,
  rowsOf,
  withClient,
  withTransaction,
} from '../platform/pg/handle.js';
import { isDimension } from '../platform/config/dimensions.js';
import { tableSpec } from '../schema/report-tables.js';
import { buildingVersion, evolveLockKey, readVersions, sameDimensions } from '../schema/versions.js';
import type { Logger } from '../platform/log/logger.js';
import type { ReportJob } from '../platform/config/jobs.js';
import type { PullQueue } from '../platform/queue/queues.js';
import type { Notify } from '../webhooks/events.js';
import { enqueuePulls, type EnqueuedPull } from '../schedule/enqueue.js';
import * as sql from './sql.js';

/** The serving version's periods, how many the building one has loaded, and those missing, newest first. */
export interface Coverage {
  readonly report: string;
  readonly serving: ReportVersion;
  readonly building: ReportVersion;
  readonly periods: number;
  readonly covered: number;
  readonly missing: readonly Period[];
}

/** The coverage of `report`'s building version, or undefined when none; on `db` (a transaction's client). */
export async function coverage(
  wh: Warehouse,
  report: string,
  db: Queryable = wh.pool,
): Promise<Coverage | undefined> {
  const versions = await readVersions(wh, report, db);
  const serving = versions.find((v) => v.state === 'serving');
  const building = versions.find((v) => v.state === 'building');
  if (serving === undefined || building === undefined) return undefined;
  const rows = await rowsOf(db, sql.coverage(wh.schema, report, serving.dimensions, building.dimensions));
  return {
    report,
    serving,
    building,
    periods: rows.length,
    covered: rows.filter((r) => r.covered).length,
    missing: rows.filter((r) => !r.covered).map((r) => ({ start: r.start, end: r.end })),
  };
}

/** What a swap did: report, versions from and to, and its view file if refused. */
export type Swapped = {
  readonly report: string;
  readonly from: number;
  readonly to: number;
  readonly refused: readonly ViewOutcome[];
};

/** Switches `report`'s stable name and bi_ views to its building version in one transaction once it covers
 * every period (or `force`); readers block a moment, never seeing an error or an empty view. */
export async function swapVersion(
  client: ClientBase,
  wh: Warehouse,
  report: { readonly name: string; readonly period?: 'day' | 'week' | 'month' },
  options: { readonly force?: boolean } = {},
): Promise<Swapped | undefined> {
  const { schema } = wh;
  return withTransaction(client, async () => {
    // Exclusive: waits out the loads in flight, so none writes a version this swap retires.
    await execute(client, lock(evolveLockKey(schema, report.name)));
    const state = await coverage(wh, report.name, client);
    if (state === undefined) return undefined;
    if (state.missing.length > 0 && options.force !== true) return undefined;
    const { serving, building } = state;
    return asidePacing(client, wh, report.name, async () => {
      const stable = reportTable(report.name);
      // Our own views over the stable name go first; ensureViews makes them again below.
      for (const view of [dailyViewName(report.name), `bi_${report.name}`])
        await execute(client, dropView(view, schema));
      if (serving.table === stable) {
        // Version 1 is the physical report_<name>: it keeps its rows under a versioned name.
        const renamed = derivedName(`${stable}__v${serving.version}`);
        await renameTable(client, wh, { name: report.name, dimensions: serving.dimensions }, renamed);
        await execute(client, sql.setVersionTable(schema, report.name, serving.version, renamed));
      }
      const steps = [
        ...sql.stableView(schema, stable, building.table, serving.table !== stable),
        ...sql.switchVersions(schema, report.name, serving.version, building.version),
      ];
      for (const st of steps) await execute(client, st);
      const views = await ensureViews(client, wh, [report]);
      await ensureDailyViews(client, wh, [report]);
      await describeReportObjects(client, wh, [report]);
      await regrantBiViews(client, wh);
      const refused = views.filter((v) => v.status === 'refused');
      return { report: report.name, from: serving.version, to: building.version, refused };
    });
  });
}

/** Renames version 1's table and the indexes named after it, so a later version can never collide. */
async function renameTable(
  client: ClientBase,
  wh: Warehouse,
  report: { readonly name: string; readonly dimensions: readonly string[] },
  to: string,
): Promise<void> {
  const from = reportTable(report.name);
  await execute(client, sql.rename('TABLE', wh.schema, from, to));
  const spec = { name: report.name, dimensions: report.dimensions.filter(isDimension) };
  const [before, after] = [tableSpec(spec, from).indexes, tableSpec(spec, to).indexes];
  const renamed = new Map(before.map((ix, i) => [ix.name, after[i]?.name ?? ix.name]));
  for (const { name } of await rowsOf(client, sql.indexNames(wh.schema, to))) {
    const next =
      renamed.get(name) ??
      (name.startsWith(`${from}_`) ? derivedName(`${to}_${name.slice(from.length + 1)}`) : name);
    if (next !== name) await execute(client, sql.rename('INDEX', wh.schema, name, next));
  }
}

/** Swaps `report` when its building version is complete and auto-swaps: called after each of its loads. */
export async function swapWhenCovered(
  wh: Warehouse,
  report: { readonly name: string; readonly period?: 'day' | 'week' | 'month' },
): Promise<Swapped | undefined> {
  const building = await buildingVersion(wh, report.name);
  if (building === undefined || !building.autoSwap) return undefined;
  // Checked first without the lock: the exclusive lock waits for every load in flight.
  const state = await coverage(wh, report.name);
  if (state === undefined || state.missing.length > 0) return undefined;
  return withClient(wh.pool, (client) => swapVersion(client, wh, report));
}

export async function dropRetired(client: ClientBase, wh: Warehouse, report: string): Promise<string[]> {
  return withTransaction(client, async () => {
    await execute(client, lock(evolveLockKey(wh.schema, report)));
    const retired = (await readVersions(wh, report, client)).filter((v) => v.state === 'retired');
    for (const v of retired)
      for (const st of sql.dropVersion(wh.schema, report, v.version, v.table)) await execute(client, st);
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

/** Called after each load: swaps a covered evolving report, re-pulls an old-shape load; logs failures. */
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
        const pull = { report: report.name, period, version: next.version };
        await enqueuePulls(pulls, [account === undefined ? pull : { ...pull, account }]);
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
