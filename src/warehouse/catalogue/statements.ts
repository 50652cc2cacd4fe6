import { ident, qualified } from '../pg.js';
import type { Column } from './columns.js';

/** A parameterised statement, built purely and run by the write shell. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The entity tables and their keys. */
export interface EntityTable {
  readonly table: 'campaigns' | 'creatives';
  readonly key: 'campaign_id' | 'creative_id';
  readonly columns: readonly Column[];
}

/**
 * Upserts `rows` (objects keyed by column name) from one jsonb parameter: one round trip per
 * chunk, every value a parameter. A row seen again gets its columns, synced_at and a cleared
 * deleted_at (revival); now() is the transaction's start, so one sync stamps one synced_at.
 */
export function upsertStatement(
  schema: string,
  account: string,
  t: EntityTable,
  rows: readonly object[],
): Statement {
  const names = t.columns.map((c) => ident(c.name));
  const recordType = t.columns.map((c) => `${ident(c.name)} ${c.type}`).join(', ');
  const updates = t.columns
    .filter((c) => c.name !== t.key)
    .map((c) => `${ident(c.name)} = EXCLUDED.${ident(c.name)}`);
  return {
    text:
      `INSERT INTO ${qualified(schema, t.table)} (account, ${names.join(', ')}, synced_at, deleted_at) ` +
      `SELECT $2::text, ${names.join(', ')}, now(), NULL FROM jsonb_to_recordset($1::jsonb) AS r(${recordType}) ` +
      `ON CONFLICT (account, ${ident(t.key)}) DO UPDATE SET ${updates.join(', ')}, ` +
      'synced_at = EXCLUDED.synced_at, deleted_at = NULL',
    values: [JSON.stringify(rows), account],
  };
}

/** Counts the rows among `ids` that are soft-deleted now and are about to be revived. */
export function countRevivedStatement(
  schema: string,
  account: string,
  t: EntityTable,
  ids: readonly number[],
): Statement {
  return {
    text:
      `SELECT count(*)::int AS n FROM ${qualified(schema, t.table)} t ` +
      `JOIN unnest($1::bigint[]) AS seen(id) ON t.${ident(t.key)} = seen.id ` +
      'WHERE t.account = $2 AND t.deleted_at IS NOT NULL',
    values: [ids, account],
  };
}

/**
 * Soft-deletes every live row this transaction's upserts did not touch: those carry synced_at =
 * now(), the transaction's start. Comparing timestamps keeps this linear; `NOT (id = ANY($1))`
 * over the seen ids was quadratic (5 s for 25,000 creatives).
 */
export function softDeleteStatement(schema: string, account: string, t: EntityTable): Statement {
  return {
    text:
      `UPDATE ${qualified(schema, t.table)} SET deleted_at = now() ` +
      'WHERE account = $1 AND deleted_at IS NULL AND synced_at <> now()',
    values: [account],
  };
}

/** Drops the zone assignments of the given campaigns, before they are written afresh. */
export function clearZonesStatement(
  schema: string,
  account: string,
  campaignIds: readonly number[],
): Statement {
  return {
    // A join, not `= ANY($1)`: with thousands of ids the array test per row is quadratic.
    text:
      `DELETE FROM ${qualified(schema, 'campaign_zones')} z USING unnest($1::bigint[]) AS seen(id) ` +
      'WHERE z.account = $2 AND z.campaign_id = seen.id',
    values: [campaignIds, account],
  };
}

/** Inserts campaign x zone pairs given as two parallel arrays. */
export function insertZonesStatement(
  schema: string,
  account: string,
  pairs: readonly (readonly [number, number])[],
): Statement {
  return {
    text:
      `INSERT INTO ${qualified(schema, 'campaign_zones')} (account, campaign_id, zone_id) ` +
      'SELECT $3::text, p.c, p.z FROM unnest($1::bigint[], $2::bigint[]) AS p(c, z)',
    values: [pairs.map((p) => p[0]), pairs.map((p) => p[1]), account],
  };
}

/** Splits `items` into chunks of at most `size`, so no statement carries an unbounded parameter. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
