// The reads of report_loads for `adops status`, `adops heal` and `adops loads`, as pure builders.
import type { CounterName } from '../platform/config/dimensions.js';
import { LONGEST_PERIOD_DAYS } from '../platform/dates/periods.js';
import { qualified, statement } from '../platform/pg/handle.js';
import type { PullStep, LoadStatus } from './sql.js';

/** Per counter: the previous load's total and the new load's change of it (null: not measurable). */
export type Restatement = Record<CounterName, { previous: number | null; delta: number | null }>;

/** "The row's period overlaps $2..$3", $4 being LONGEST_PERIOD_DAYS. The overlap alone bounds period_start
 * only from above (years for a month of status); the lower bound drops no row and narrows the scan. */
function overlapsWindow(t?: 't'): string {
  const c = t === undefined ? '' : `${t}.`;
  return `${c}period_start <= $3::date AND ${c}period_end >= $2::date AND ${c}period_start > $2::date - $4::integer`;
}

/** One period's latest attempt (a failed re-pull is 'failed', its rows stay) and its current rows. */
export interface PeriodRow {
  period_start: string;
  period_end: string;
  last_status: LoadStatus;
  last_loaded_at: Date | null;
  rows: number | null;
  error: string | null;
  provisional: boolean; // its rows are a provisional load's
}

/** Every period of `report` overlapping from..to that reached the loader. Only the serving version's loads
 * count; periods retention dropped count as never loaded; a provisional attempt counts only when loaded.
 * Cost follows the window. */
export function periodRowsSql(schema: string, report: string, from: string, to: string, account: string) {
  const loads = qualified(schema, 'report_loads');
  // A report `adops migrate` never saw has no versions; its (failed) loads still count.
  const serving = `(s.dimensions IS NULL OR l.dimensions = s.dimensions)`;
  return statement<PeriodRow>(
    `WITH s AS (
       SELECT (SELECT dimensions FROM ${qualified(schema, 'report_versions')}
                WHERE report = $1 AND state = 'serving') AS dimensions),
     last AS (
       SELECT DISTINCT ON (period_start, period_end) period_start, period_end, status, error
         FROM ${loads} l CROSS JOIN s
        WHERE account = $5 AND report = $1 AND ${overlapsWindow()}
          AND retention_dropped_at IS NULL AND ${serving} AND (NOT provisional OR status = 'loaded')
        ORDER BY period_start, period_end, load_id DESC)
     SELECT last.period_start::text AS period_start, last.period_end::text AS period_end,
            last.status AS last_status, cur.recorded_at AS last_loaded_at, cur.rows,
            CASE WHEN last.status = 'failed' THEN last.error END AS error, coalesce(cur.provisional, false) AS provisional
       FROM last
       -- The rows in the table are the latest loaded load's of the serving version (recorded_at is
       -- that load's commit time, as report_totals.loaded_at).
       LEFT JOIN LATERAL (
         SELECT l.recorded_at, l.rows, l.provisional FROM ${loads} l CROSS JOIN s
          WHERE l.account = $5 AND l.report = $1 AND l.period_start = last.period_start
            AND l.period_end = last.period_end AND l.status = 'loaded' AND l.retention_dropped_at IS NULL
            AND ${serving}
          ORDER BY l.load_id DESC LIMIT 1) cur ON true
      ORDER BY last.period_start, last.period_end`,
    [report, from, to, LONGEST_PERIOD_DAYS, account],
  );
}

/** Periods whose current rows (the load owning report_totals, not provisional) did not reconcile with the
 * API's totals. */
export function unreconciledSql(schema: string, report: string, from: string, to: string, account: string) {
  return statement<{ start: string; end: string; reason: string | null; mismatch: unknown }>(
    `SELECT t.period_start::text AS start, t.period_end::text AS "end", l.unreconciled_reason AS reason, l.mismatch
       FROM ${qualified(schema, 'report_totals')} t
       JOIN ${qualified(schema, 'report_loads')} l ON l.account = t.account AND l.load_id = t.load_id
      WHERE t.account = $5 AND t.report = $1 AND ${overlapsWindow('t')}
        AND l.reconciled = false AND NOT l.provisional
      ORDER BY t.period_start`,
    [report, from, to, LONGEST_PERIOD_DAYS, account],
  );
}

/** The restatements of loads of the last 90 days (of `report`, or of all when null), with the period's age. */
export function restatementsSql(schema: string, report: string | null) {
  return statement<{ report: string; age_days: number; restatement: Restatement }>(
    `SELECT report, (fetched_at::date - period_end) AS age_days, restatement
       FROM ${qualified(schema, 'report_loads')}
      WHERE status = 'loaded' AND restatement IS NOT NULL
        AND recorded_at > now() - make_interval(days => 90)
        AND ($1::text IS NULL OR report = $1)`,
    [report],
  );
}

/** Each of `reports`' latest restatement. */
export function lastRestatementsSql(schema: string, reports: readonly string[]) {
  return statement<{ report: string; restatement: Restatement }>(
    `SELECT r.report, l.restatement
       FROM unnest($1::text[]) AS r(report)
       CROSS JOIN LATERAL (
         SELECT restatement FROM ${qualified(schema, 'report_loads')}
          WHERE report = r.report AND status = 'loaded' AND restatement IS NOT NULL
          -- -load_id: only report_loads_restated gives this order.
          ORDER BY -load_id LIMIT 1) l`,
    [reports],
  );
}

/** A failed pull of a period, as countHealedSinceSql takes it (`failedAt` in ms). */
export type PastFailure = Readonly<Record<'account' | 'report' | 'periodStart' | 'periodEnd', string>> & {
  readonly failedAt: number;
};

/** How many of `failures` had their period loaded after they failed. */
export function countHealedSinceSql(schema: string, failures: readonly PastFailure[]) {
  return statement<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM unnest($1::text[], $2::text[], $3::date[], $4::date[], $5::float8[]) AS f(account, report, s, e, at)
      WHERE EXISTS (
        SELECT 1 FROM ${qualified(schema, 'report_loads')} l
         WHERE l.account = f.account AND l.report = f.report AND l.period_start = f.s AND l.period_end = f.e
           AND l.status = 'loaded' AND l.recorded_at > to_timestamp(f.at / 1000))`,
    [
      failures.map((f) => f.account),
      failures.map((f) => f.report),
      failures.map((f) => f.periodStart),
      failures.map((f) => f.periodEnd),
      failures.map((f) => f.failedAt),
    ],
  );
}

/** One attempt of report_loads as `adops loads` lists it. */
export interface LoadListing {
  readonly load_id: string;
  readonly report: string;
  readonly account: string;
  readonly period_start: string;
  readonly period_end: string;
  readonly status: LoadStatus;
  readonly rows: number | null;
  readonly failed_step: PullStep | null;
  readonly error: string | null;
  readonly recorded_at: Date;
  /** The request it came in (its fetch token): the periods of that request, and their range. */
  readonly fetch_token: string | null;
  readonly request_periods: number;
  readonly request_start: string;
  readonly request_end: string;
  readonly provisional: boolean; // a load of a period not yet ended (today's)
}

/** What `adops loads` narrows to. */
export type LoadsFilter = {
  readonly report?: string;
  readonly account?: string;
  readonly failed: boolean;
  readonly limit: number;
};

/** The newest `limit` attempts of report_loads, newest first, narrowed to a report, an account, failures. */
export function recentLoadsSql(schema: string, filter: LoadsFilter) {
  return statement<LoadListing>(
    `SELECT l.load_id::text AS load_id, l.report, l.account, l.period_start::text AS period_start,
            l.period_end::text AS period_end, l.status, l.rows, l.failed_step, l.error, l.recorded_at,
            l.provisional, l.fetch_token::text AS fetch_token, coalesce(q.periods, 1) AS request_periods,
            coalesce(q.start, l.period_start)::text AS request_start, coalesce(q.until, l.period_end)::text AS request_end
       FROM ${qualified(schema, 'report_loads')} l
       LEFT JOIN LATERAL (
         SELECT count(*)::int AS periods, min(s.period_start) AS start, max(s.period_end) AS until
           FROM ${qualified(schema, 'report_loads')} s
          WHERE s.account = l.account AND s.fetch_token = l.fetch_token AND s.report = l.report
            AND s.replay_of IS NOT DISTINCT FROM l.replay_of) q ON true
      WHERE ($1::text IS NULL OR l.report = $1) AND ($2::text IS NULL OR l.account = $2)
        AND (NOT $3::boolean OR l.status = 'failed')
      ORDER BY l.load_id DESC
      LIMIT $4`,
    [filter.report ?? null, filter.account ?? null, filter.failed, filter.limit],
  );
}
