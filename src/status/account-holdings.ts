// Accounts that hold rows in the warehouse but are not configured: `default` after an accounts file
// named its server otherwise, or an account removed from the file. Their rows still count in the bi_
// views, so `adops status` names them (and how to move them: `adops accounts rename`).
import { qualified, type Warehouse } from '../platform/pg/handle.js';

/** An account holding rows that is not among the configured ones. */
export interface UnconfiguredAccount {
  readonly account: string;
  /** Its rows of report_loads (every attempt), and of those the periods currently loaded. */
  readonly loads: number;
  readonly loadedPeriods: number;
  /** First and last day of its loaded periods; null when none is loaded. */
  readonly first: string | null;
  readonly last: string | null;
  readonly campaigns: number;
}

/** The accounts holding loads or campaigns that are not in `configured`, each with what it holds. */
export async function readUnconfiguredAccounts(
  wh: Warehouse,
  configured: readonly string[],
): Promise<UnconfiguredAccount[]> {
  const loads = qualified(wh.schema, 'report_loads');
  const campaigns = qualified(wh.schema, 'campaigns');
  // The distinct accounts by skipping along each primary key (account first): a few index probes, not
  // a scan of report_loads.
  const distinct = (table: string) => `(WITH RECURSIVE a(account) AS (
      (SELECT account FROM ${table} ORDER BY account LIMIT 1)
      UNION ALL
      SELECT (SELECT t.account FROM ${table} t WHERE t.account > a.account ORDER BY t.account LIMIT 1)
        FROM a WHERE a.account IS NOT NULL)
    SELECT account FROM a WHERE account IS NOT NULL)`;
  const { rows } = await wh.pool.query<UnconfiguredAccount>(
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
  return rows;
}
