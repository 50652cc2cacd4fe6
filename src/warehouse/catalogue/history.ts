// The catalogue's history (SCD type 2, sql/008_entity_history.sql): after a sync's upserts and soft
// deletes, and in the same transaction, each entity whose tracked fields differ from its current
// version gets that version closed at now() and a new one opened. Pure statement builders.
import { qualified } from '../pg.js';
import type { Statement } from './statements.js';

/** An entity table, its history table and the fields whose changes make a new version. */
export interface HistoryTable {
  readonly table: 'campaigns' | 'creatives';
  readonly history: 'campaigns_history' | 'creatives_history';
  readonly key: 'campaign_id' | 'creative_id';
  /** Columns copied from the entity row as they are (identifiers, not user input). */
  readonly tracked: readonly string[];
}

export const CAMPAIGN_HISTORY: HistoryTable = {
  table: 'campaigns',
  history: 'campaigns_history',
  key: 'campaign_id',
  tracked: ['name', 'is_active', 'is_archived', 'delivery_start', 'delivery_end'],
};

export const CREATIVE_HISTORY: HistoryTable = {
  table: 'creatives',
  history: 'creatives_history',
  key: 'creative_id',
  tracked: ['campaign_id', 'name', 'is_active', 'delivery_start', 'delivery_end'],
};

/** Ends the current version of each entity whose tracked fields or deletion changed. */
export function closeChangedVersions(schema: string, account: string, t: HistoryTable): Statement {
  const fields = t.tracked.map((c) => `h.${c}`).join(', ');
  const current = t.tracked.map((c) => `e.${c}`).join(', ');
  return {
    text:
      `UPDATE ${qualified(schema, t.history)} h SET valid_to = now() FROM ${qualified(schema, t.table)} e ` +
      `WHERE e.account = $1 AND h.account = e.account AND h.${t.key} = e.${t.key} AND h.valid_to IS NULL ` +
      `AND (${fields}, h.deleted) IS DISTINCT FROM (${current}, e.deleted_at IS NOT NULL)`,
    values: [account],
  };
}

/**
 * Opens a version for each entity without a current one: new entities (from their `created`
 * time, or now() if later or unknown) and those closed by closeChangedVersions (from now()).
 */
export function openVersions(schema: string, account: string, t: HistoryTable): Statement {
  const columns = t.tracked.join(', ');
  const values = t.tracked.map((c) => `e.${c}`).join(', ');
  const history = qualified(schema, t.history);
  return {
    text:
      `INSERT INTO ${history} (account, ${t.key}, ${columns}, deleted, valid_from) ` +
      `SELECT e.account, e.${t.key}, ${values}, e.deleted_at IS NOT NULL, ` +
      `CASE WHEN EXISTS (SELECT 1 FROM ${history} p WHERE p.account = e.account AND p.${t.key} = e.${t.key}) THEN now() ` +
      `ELSE least(coalesce(e.created, now()), now()) END ` +
      `FROM ${qualified(schema, t.table)} e ` +
      `WHERE e.account = $1 AND NOT EXISTS (SELECT 1 FROM ${history} c WHERE c.account = e.account AND c.${t.key} = e.${t.key} AND c.valid_to IS NULL)`,
    values: [account],
  };
}
