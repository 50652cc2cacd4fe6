// Writing a synced catalogue: the whole catalogue of one account in one transaction (upserts,
// soft deletes, zones, history), with the statements of sql.ts.
import type { ClientBase } from 'pg';
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { CAMPAIGN_COLUMNS, CREATIVE_COLUMNS, type Catalogue, type WriteResult } from './stored-rows.js';
import { type Warehouse, execute, firstRow, inTransaction } from '../platform/pg/handle.js';
import * as sql from './sql.js';

export interface WriteOptions {
  /** The account the catalogue belongs to (DEFAULT_ACCOUNT when not given): only its rows are touched. */
  readonly account?: string;
  /** Runs in the transaction after the writes, before COMMIT (e.g. ending the sync's checkpoint). */
  readonly beforeCommit?: (client: ClientBase, result: WriteResult) => Promise<void>;
}

/** Rows per upsert statement. */
const CHUNK_ROWS = 500;

const CAMPAIGNS: sql.EntityTable = {
  table: 'campaigns',
  key: 'campaign_id',
  columns: CAMPAIGN_COLUMNS,
  tracked: ['name', 'is_active', 'is_archived', 'delivery_start', 'delivery_end'],
};

const CREATIVES: sql.EntityTable = {
  table: 'creatives',
  key: 'creative_id',
  columns: CREATIVE_COLUMNS,
  tracked: ['campaign_id', 'name', 'is_active', 'delivery_start', 'delivery_end'],
};

/**
 * Writes a whole catalogue in one transaction (upserts, zones, soft deletes of the ids not seen,
 * history), so readers never see a half-written one; syncs of one account are serialised by a lock.
 */
export async function writeCatalogue(
  wh: Warehouse,
  catalogue: Catalogue,
  options: WriteOptions = {},
): Promise<WriteResult> {
  const { schema } = wh;
  const account = options.account ?? DEFAULT_ACCOUNT;
  return inTransaction(wh.pool, async (client) => {
    for (const st of sql.openWrite(schema, account)) await execute(client, st);
    const campaignRows = catalogue.campaigns.map((c) => c.row);
    const campaignIds = campaignRows.map((r) => r.campaign_id);
    const creativeIds = catalogue.creatives.map((r) => r.creative_id);

    let revived = 0;
    for (const [t, ids] of [
      [CAMPAIGNS, campaignIds],
      [CREATIVES, creativeIds],
    ] as const)
      revived += (await firstRow(client, sql.countDeleted(schema, account, t, ids)))?.n ?? 0;

    for (const part of chunks(campaignRows, CHUNK_ROWS))
      await execute(client, sql.upsertStatement(schema, account, CAMPAIGNS, part));
    for (const part of chunks(catalogue.creatives, CHUNK_ROWS))
      await execute(client, sql.upsertStatement(schema, account, CREATIVES, part));

    // The zones of the campaigns seen are written afresh.
    await execute(client, sql.deleteZones(schema, account, campaignIds));
    const pairs = catalogue.campaigns.flatMap((c) => c.zoneIds.map((z) => [c.row.campaign_id, z] as const));
    for (const part of chunks(pairs, CHUNK_ROWS * 10))
      await execute(client, sql.insertZones(schema, account, part));

    let deleted = 0;
    for (const t of [CAMPAIGNS, CREATIVES])
      deleted += await execute(client, sql.softDeleteStatement(schema, account, t));
    // The history sees the catalogue as this transaction leaves it, deletions included.
    for (const t of [CAMPAIGNS, CREATIVES])
      for (const st of sql.historyStatements(schema, account, t)) await execute(client, st);

    const result = { campaigns: campaignRows.length, creatives: creativeIds.length, deleted, revived };
    await options.beforeCommit?.(client, result);
    return result;
  });
}

/** Splits `items` into chunks of at most `size`, so no statement carries an unbounded parameter. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
