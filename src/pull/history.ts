// Read side of report_loads for `adops status`, `adops heal` and `adops loads`: the last attempt of
// every period (in the shape the queue's planning uses), the periods that do not reconcile, the
// restatements and what they changed.
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { COUNTERS, type CounterName } from '../platform/config/dimensions.js';
import type { ReportJob } from '../platform/config/jobs.js';
import type { Counters, Totals } from '../flatten/types.js';
import type { PeriodState } from '../plan/pulls.js';
import { firstRow, rowsOf, type Warehouse } from '../platform/pg/handle.js';
import {
  countHealedSinceSql,
  lastRestatementsSql,
  periodRowsSql,
  recentLoadsSql,
  restatementsSql,
  unreconciledSql,
  type LoadsFilter,
  type PastFailure,
  type Restatement,
} from './history-sql.js';

export type { LoadListing, Restatement } from './history-sql.js';

/** Every period of `report` overlapping from..to that reached the loader (see periodRowsSql). */
export function periodRows(
  wh: Warehouse,
  report: string,
  from: string,
  to: string,
  account = DEFAULT_ACCOUNT,
) {
  return rowsOf(wh, periodRowsSql(wh.schema, report, from, to, account));
}

/** The last attempt of every period of `report` overlapping from..to, oldest first. */
export async function loadStates(
  wh: Warehouse,
  report: Pick<ReportJob, 'name'>,
  from: string,
  to: string,
  account = DEFAULT_ACCOUNT,
): Promise<PeriodState[]> {
  return (await periodRows(wh, report.name, from, to, account)).map((r) => ({
    start: r.period_start,
    end: r.period_end,
    lastStatus: r.last_status,
    rows: r.rows === null ? null : Number(r.rows),
    lastLoadedAt: r.last_loaded_at,
    error: r.error,
    provisional: r.provisional,
  }));
}

/** Periods of `report` overlapping from..to whose rows did not reconcile: start date, why (null for a load
 * recorded before the reason was) and the per-counter differences. */
export function unreconciledPeriods(
  wh: Warehouse,
  report: Pick<ReportJob, 'name'>,
  from: string,
  to: string,
  account = DEFAULT_ACCOUNT,
) {
  return rowsOf(wh, unreconciledSql(wh.schema, report.name, from, to, account));
}

/** How much reloads of the last 90 days changed the totals, by report and the period's age in days. */
export async function restatements(wh: Warehouse, report?: string): Promise<RestatementSummary[]> {
  const rows = await rowsOf(wh, restatementsSql(wh.schema, report ?? null));
  return summarizeRestatements(rows.map((r) => ({ ...r, ageDays: r.age_days })));
}

/** Each re-pulled report's latest restatement, as the largest relative change of a total. */
export async function lastRestatements(wh: Warehouse, reports: readonly string[]) {
  const rows = await rowsOf(wh, lastRestatementsSql(wh.schema, reports));
  return new Map(rows.map((r) => [r.report, maxRelativeChange(r.restatement)]));
}

/** How many of `failures` had their period loaded after they failed (healed by heal, a backfill or the schedule). */
export async function countHealedSince(wh: Warehouse, failures: readonly PastFailure[]): Promise<number> {
  if (failures.length === 0) return 0;
  return (await firstRow(wh, countHealedSinceSql(wh.schema, failures)))?.n ?? 0;
}

/** The newest attempts of report_loads, as `adops loads` lists them (see recentLoadsSql). */
export const recentLoads = (wh: Warehouse, filter: LoadsFilter) =>
  rowsOf(wh, recentLoadsSql(wh.schema, filter));

function perCounter<T>(f: (c: CounterName) => T): Record<CounterName, T> {
  return {
    ad_requests: f('ad_requests'),
    filled_impressions: f('filled_impressions'),
    impressions: f('impressions'),
    measurable_impressions: f('measurable_impressions'),
    viewable_impressions: f('viewable_impressions'),
  };
}

/** The change of each total from `previous` to `current` (null where either lacks the total). */
export function restatementOf(previous: Totals, current: Totals): Restatement {
  return perCounter((c) => {
    const [before, now] = [previous[c], current[c]];
    return { previous: before, delta: before === null || now === null ? null : now - before };
  });
}

/** True when any total measurably changed. */
export function isRestated(r: Restatement): boolean {
  return COUNTERS.some((c) => r[c].delta !== null && r[c].delta !== 0);
}

/** The largest |delta| / previous of any total (1 when only the previous was 0; 0 if none measurable). */
export function maxRelativeChange(r: Restatement): number {
  let max = 0;
  for (const c of COUNTERS) {
    const { previous, delta } = r[c];
    if (previous !== null && delta !== null && delta !== 0)
      max = Math.max(max, previous === 0 ? 1 : Math.abs(delta) / previous);
  }
  return max;
}

/** One reload of a period: its age (whole days from the period's last day to the fetch) and what changed. */
type RestatementSample = {
  readonly report: string;
  readonly ageDays: number;
  readonly restatement: Restatement;
};

/** Reloads of one report's periods at one age: how many, how many changed any total, the mean |delta| per
 * counter over the reloads that could measure it (0 when none could), and the largest maxRelativeChange. */
export interface RestatementSummary {
  readonly report: string;
  readonly age_days: number;
  readonly loads: number;
  readonly restated: number;
  readonly avg_abs_change: Counters;
  readonly max_rel_change: number;
}

/** Groups reloads by report and age, sorted by report then age. */
export function summarizeRestatements(samples: Iterable<RestatementSample>): RestatementSummary[] {
  const groups = new Map<string, { report: string; age: number; items: Restatement[] }>();
  for (const s of samples) {
    const key = `${s.report}\u0000${s.ageDays}`;
    const g = groups.get(key) ?? { report: s.report, age: s.ageDays, items: [] };
    groups.set(key, g);
    g.items.push(s.restatement);
  }
  return [...groups.values()]
    .sort((a, b) => (a.report === b.report ? a.age - b.age : a.report < b.report ? -1 : 1))
    .map((g) => ({
      report: g.report,
      age_days: g.age,
      loads: g.items.length,
      restated: g.items.filter(isRestated).length,
      avg_abs_change: perCounter((c) => {
        const deltas = g.items.flatMap(({ [c]: { previous, delta } }) =>
          previous === null || delta === null ? [] : [Math.abs(delta)],
        );
        return deltas.length === 0 ? 0 : deltas.reduce((a, b) => a + b, 0) / deltas.length;
      }),
      max_rel_change: Math.max(0, ...g.items.map(maxRelativeChange)),
    }));
}
