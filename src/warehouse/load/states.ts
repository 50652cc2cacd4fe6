// What the warehouse says about each period, in the shape the queue's planning and `adops status`
// use: the last attempt of every period, and the periods whose rows do not reconcile.
import { DEFAULT_ACCOUNT } from '../../config/accounts.js';
import type { ReportJob } from '../../config/jobs.js';
import { LONGEST_PERIOD_DAYS } from '../../dates/periods.js';
import { overlapsWindow, periodStates } from '../loads-query.js';
import type { PeriodState } from '../../plan/pulls.js';
import { qualified, type Warehouse } from '../pg.js';

/** The last attempt of every period of `report` overlapping from..to, oldest first. */
export async function loadStates(
  wh: Warehouse,
  report: Pick<ReportJob, 'name'>,
  from: string,
  to: string,
  account: string = DEFAULT_ACCOUNT,
): Promise<PeriodState[]> {
  const rows = await periodStates(wh, report.name, from, to, account);
  return rows.map((r) => ({
    start: r.period_start,
    end: r.period_end,
    lastStatus: r.last_status,
    rows: r.rows === null ? null : Number(r.rows),
    lastLoadedAt: r.last_loaded_at,
    error: r.error,
  }));
}

type Unreconciled = { start: string; end: string; reason: string | null; mismatch: unknown };

/**
 * Periods of `report` overlapping from..to whose current rows (the load owning report_totals)
 * could not be reconciled with the API's totals: the start date, why ('mismatch', 'no totals',
 * 'partial totals'; null for a load recorded before the reason was) and the per-counter differences.
 */
export async function unreconciledPeriods(
  wh: Warehouse,
  report: Pick<ReportJob, 'name'>,
  from: string,
  to: string,
  account: string = DEFAULT_ACCOUNT,
): Promise<Unreconciled[]> {
  const { rows } = await wh.pool.query<Unreconciled>(
    `SELECT t.period_start::text AS start, t.period_end::text AS "end", l.unreconciled_reason AS reason, l.mismatch
       FROM ${qualified(wh.schema, 'report_totals')} t
       JOIN ${qualified(wh.schema, 'report_loads')} l ON l.account = t.account AND l.load_id = t.load_id
      WHERE t.account = $5 AND t.report = $1 AND ${overlapsWindow('t')}
        AND l.reconciled = false
      ORDER BY t.period_start`,
    [report.name, from, to, LONGEST_PERIOD_DAYS, account],
  );
  return rows;
}
