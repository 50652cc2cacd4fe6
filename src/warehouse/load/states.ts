// What the warehouse says about each period, in the shape the queue's planning and `adops status`
// use: the last attempt of every period, and the periods whose rows do not reconcile.
import type { Pool } from 'pg';
import { DEFAULT_ACCOUNT } from '../../config/accounts.js';
import type { ReportJob } from '../../config/jobs.js';
import { LONGEST_PERIOD_DAYS } from '../../dates/periods.js';
import { overlapsWindow, periodStates } from '../loads-query.js';
import type { PeriodState } from '../../plan/pulls.js';
import { qualified, warehouseOf } from '../pg.js';

/** The last attempt of every period of `report` overlapping from..to, oldest first. */
export async function loadStates(
  pool: Pool,
  schema: string,
  report: Pick<ReportJob, 'name'>,
  from: string,
  to: string,
  account: string = DEFAULT_ACCOUNT,
): Promise<PeriodState[]> {
  const rows = await periodStates(warehouseOf(pool, schema), report.name, from, to, account);
  return rows.map((r) => ({
    start: r.period_start,
    end: r.period_end,
    lastStatus: r.last_status,
    rows: r.rows === null ? null : Number(r.rows),
    lastLoadedAt: r.last_loaded_at,
    error: r.error,
  }));
}

/**
 * Periods of `report` overlapping from..to whose current rows (the load owning report_totals)
 * could not be reconciled with the API's totals: the start date, why ('mismatch', 'no totals',
 * 'partial totals'; null for a load recorded before the reason was) and the per-counter differences.
 */
export async function unreconciledPeriods(
  pool: Pool,
  schema: string,
  report: Pick<ReportJob, 'name'>,
  from: string,
  to: string,
  account: string = DEFAULT_ACCOUNT,
): Promise<Array<{ start: string; end: string; reason: string | null; mismatch: unknown }>> {
  const { rows } = await pool.query<{ start: string; end: string; reason: string | null; mismatch: unknown }>(
    `SELECT t.period_start::text AS start, t.period_end::text AS "end", l.unreconciled_reason AS reason, l.mismatch
       FROM ${qualified(schema, 'report_totals')} t
       JOIN ${qualified(schema, 'report_loads')} l ON l.account = t.account AND l.load_id = t.load_id
      WHERE t.account = $5 AND t.report = $1 AND ${overlapsWindow('t')}
        AND l.reconciled = false
      ORDER BY t.period_start`,
    [report.name, from, to, LONGEST_PERIOD_DAYS, account],
  );
  return rows;
}
