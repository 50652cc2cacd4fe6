// What the freshness watch remembers (sql/002_shared_state.sql): each report's last state and the
// disagreements announced; one atomic statement each, so of several workers only the first tells a change.
import { qualified, statement } from '../platform/pg/handle.js';

/** Records a report's freshness `state`; a row (the state replaced, null when never seen) only on a change. */
export const swapState = (schema: string, account: string, report: string, state: string) =>
  statement<{ previous: string | null }>(
    `INSERT INTO ${qualified(schema, 'freshness_states')} AS f (account, report, state) VALUES ($1, $2, $3)
     ON CONFLICT (account, report) DO UPDATE SET previous = f.state, state = excluded.state, changed_at = now()
      WHERE f.state <> excluded.state
     RETURNING previous`,
    [account, report, state],
  );

/** Records a disagreement as announced; touches a row only when none was announced within `within`. */
export const claimDisagreement = (schema: string, key: readonly string[], within: string) =>
  statement(
    `INSERT INTO ${qualified(schema, 'announced_disagreements')} AS a
       (account, period_start, period_end, report, other_report, sums) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (account, period_start, period_end, report, other_report, sums)
       DO UPDATE SET announced_at = now() WHERE a.announced_at < now() - $7::interval`,
    [...key, within],
  );

/** Claims the campaigns bi_campaign_pacing calls behind not yet announced on `day`; their rows (state left out). */
export const claimBehind = (schema: string, day: string) =>
  statement<{ row: { account: string; campaign_id: number } }>(
    `WITH behind AS (SELECT * FROM ${qualified(schema, 'bi_campaign_pacing')} WHERE state = 'behind'),
     claimed AS (
       INSERT INTO ${qualified(schema, 'announced_pacing')} (account, campaign_id, day)
       SELECT account, campaign_id, $1 FROM behind ON CONFLICT DO NOTHING RETURNING account, campaign_id)
     SELECT to_jsonb(b) - 'state' AS row FROM behind b JOIN claimed c USING (account, campaign_id)
      ORDER BY b.account, b.campaign_id`,
    [day],
  );
