// What the freshness watch remembers between evaluations (sql/002_shared_state.sql): each report's
// last freshness state and the disagreements already announced. Each is one atomic statement, so
// of several workers evaluating at once only the first to see a change tells it.
import { qualified, type Warehouse } from '../platform/pg/handle.js';

/** Records the report's freshness `state`; returns the one replaced (null: never seen; `state`: same). */
export async function swapFreshnessState(
  wh: Warehouse,
  account: string,
  report: string,
  state: string,
): Promise<string | null> {
  const { rows } = await wh.pool.query<{ previous: string | null }>(
    `INSERT INTO ${qualified(wh.schema, 'freshness_states')} AS f (account, report, state) VALUES ($1, $2, $3)
     ON CONFLICT (account, report) DO UPDATE SET previous = f.state, state = excluded.state, changed_at = now()
      WHERE f.state <> excluded.state
     RETURNING previous`,
    [account, report, state],
  );
  return rows.length === 0 ? state : (rows[0]?.previous ?? null);
}

/** A disagreement as announced: its account, period, the two reports and their sums. */
export type Announced = readonly [
  account: string,
  start: string,
  end: string,
  report: string,
  other: string,
  sums: string,
];

/** How long a disagreement, once announced, is not announced again (the status window at most). */
const ANNOUNCED_FOR = '400 days';

/** Records a disagreement as announced: true when no evaluation announced it within 400 days. */
export async function claimAnnouncement(wh: Warehouse, key: Announced): Promise<boolean> {
  const { rowCount } = await wh.pool.query(
    `INSERT INTO ${qualified(wh.schema, 'announced_disagreements')} AS a
       (account, period_start, period_end, report, other_report, sums) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (account, period_start, period_end, report, other_report, sums)
       DO UPDATE SET announced_at = now() WHERE a.announced_at < now() - $7::interval`,
    [...key, ANNOUNCED_FOR],
  );
  return rowCount === 1;
}
