// The read queries only `adops status` needs: totals per account and period, and unconfigured accounts.
import { COUNTERS } from '../platform/config/dimensions.js';
import type { Totals } from '../flatten/types.js';
import { ident, qualified, statement, type Statement } from '../platform/pg/handle.js';

/** A report's totals over one account and period: its own period's row, or the sum of its rows inside it. */
export interface SideRow {
  readonly account: string;
  readonly period_start: string;
  readonly period_end: string;
  readonly report: string;
  readonly totals: Totals;
  readonly first_loaded: Date;
  readonly last_loaded: Date;
  readonly exact: boolean;
}

/** Every account and period of `reports` inside from..to, with each report whose final periods tile it. */
export function sidesOf(
  schema: string,
  reports: readonly string[],
  from: string,
  to: string,
  accounts: readonly string[] | null,
) {
  // A side's counter is null when any of its rows lacks it: a partial sum would look like a gap.
  const totals = COUNTERS.map((c) => `'${c}', CASE WHEN count(t.${c}) = count(*) THEN sum(t.${c}) END`);
  return statement<SideRow>(
    `WITH t AS (
       SELECT t.* FROM ${qualified(schema, 'report_totals')} t
         JOIN ${qualified(schema, 'report_loads')} l ON l.account = t.account AND l.load_id = t.load_id
        WHERE t.report = ANY($1) AND t.period_start >= $2 AND t.period_end <= $3 AND NOT l.provisional
          AND t.retention_dropped_at IS NULL AND ($4::text[] IS NULL OR t.account = ANY($4))
     ), periods AS (SELECT DISTINCT account, period_start, period_end FROM t)
     SELECT p.account, p.period_start::text, p.period_end::text, t.report,
            jsonb_build_object(${totals.join(', ')}) AS totals,
            min(t.loaded_at) AS first_loaded, max(t.loaded_at) AS last_loaded,
            bool_or(t.period_start = p.period_start AND t.period_end = p.period_end) AS exact
       FROM periods p
       JOIN t ON t.account = p.account AND t.period_start >= p.period_start AND t.period_end <= p.period_end
      GROUP BY p.account, p.period_start, p.period_end, t.report
     HAVING sum(t.period_end - t.period_start + 1) = p.period_end - p.period_start + 1
      ORDER BY 1, 2, 3, 4`,
    [reports, from, to, accounts],
  );
}

/** An account holding rows that is not configured: they count in bi_ views, so `adops status` names it. */
export interface UnconfiguredAccount {
  readonly account: string;
  /** Its rows of report_loads (every attempt), and of those the periods currently loaded. */
  readonly loads: number;
  readonly loadedPeriods: number;
  readonly first: string | null; // First and last day of its loaded periods; null when none is loaded.
  readonly last: string | null;
  readonly campaigns: number;
}

export function unconfiguredAccounts(schema: string, configured: readonly string[]) {
  const loads = qualified(schema, 'report_loads');
  const campaigns = qualified(schema, 'campaigns');
  // The distinct accounts by skipping along each primary key: a few index probes, not a scan.
  const distinct = (table: string) => `(WITH RECURSIVE a(account) AS (
      (SELECT account FROM ${table} ORDER BY account LIMIT 1)
      UNION ALL
      SELECT (SELECT t.account FROM ${table} t WHERE t.account > a.account ORDER BY t.account LIMIT 1)
        FROM a WHERE a.account IS NOT NULL)
    SELECT account FROM a WHERE account IS NOT NULL)`;
  return statement<UnconfiguredAccount>(
    `SELECT u.account,
            (SELECT count(*)::int FROM ${loads} l WHERE l.account = u.account) AS loads,
            (SELECT count(*)::int FROM ${loads} l WHERE l.account = u.account AND l.status = 'loaded') AS "loadedPeriods",
            (SELECT min(period_start)::text FROM ${loads} l WHERE l.account = u.account AND l.status = 'loaded') AS first,
            (SELECT max(period_end)::text FROM ${loads} l WHERE l.account = u.account AND l.status = 'loaded') AS last,
            (SELECT count(*)::int FROM ${campaigns} c WHERE c.account = u.account) AS campaigns
       FROM (${distinct(loads)} UNION ${distinct(campaigns)}) u
      WHERE u.account <> ALL($1::text[])
      ORDER BY 1`,
    [configured],
  );
}

/** Points the transaction's search_path at `schema`: sql/examples/ names views unqualified. */
export function searchPathFor(schema: string): Statement<{ set_config: string }> {
  return statement('SELECT set_config($1, $2, true)', ['search_path', `${ident(schema)}, public`]);
}
