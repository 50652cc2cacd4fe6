import type { ClientBase, Pool } from 'pg';
import { DEFAULT_ACCOUNT } from '../../config/accounts.js';
import { CAMPAIGN_COLUMNS, CREATIVE_COLUMNS } from './columns.js';
import { CAMPAIGN_HISTORY, closeChangedVersions, CREATIVE_HISTORY, openVersions } from './history.js';
import {
  chunks,
  clearZonesStatement,
  countRevivedStatement,
  insertZonesStatement,
  softDeleteStatement,
  upsertStatement,
  type EntityTable,
  type Statement,
} from './statements.js';
import type { Catalogue } from './rows.js';
import { withClient, withTransaction } from '../pg.js';

/** Counts of one catalogue write. */
export interface WriteResult {
  readonly campaigns: number;
  readonly creatives: number;
  /** Campaigns and creatives newly soft-deleted by this write. */
  readonly deleted: number;
  /** Campaigns and creatives that were soft-deleted and came back. */
  readonly revived: number;
}

export interface WriteOptions {
  /** The account the catalogue belongs to (DEFAULT_ACCOUNT when not given): only its rows are touched. */
  readonly account?: string;
  /** Rows per upsert statement. */
  readonly chunkSize?: number;
  /** statement_timeout of the transaction, in milliseconds. */
  readonly statementTimeoutMs?: number;
  /** Runs in the transaction after the writes, before COMMIT (e.g. ending the sync's checkpoint). */
  readonly beforeCommit?: (client: ClientBase, result: WriteResult) => Promise<void>;
}

const CAMPAIGNS: EntityTable = { table: 'campaigns', key: 'campaign_id', columns: CAMPAIGN_COLUMNS };
const CREATIVES: EntityTable = { table: 'creatives', key: 'creative_id', columns: CREATIVE_COLUMNS };

/**
 * Writes a whole catalogue in one transaction: upserts, zone assignments, soft deletes of the
 * ids not seen, and a new history version of each entity whose name, status or delivery changed. Readers see the previous catalogue until COMMIT, never a half-written one, and
 * concurrent syncs of one schema are serialised by a transaction advisory lock.
 */
export async function writeCatalogue(
  pool: Pool,
  schema: string,
  catalogue: Catalogue,
  options: WriteOptions = {},
): Promise<WriteResult> {
  return withClient(pool, (client, markBroken) =>
    withTransaction(
      client,
      async () => {
        const result = await writeInTransaction(client, schema, catalogue, options);
        await options.beforeCommit?.(client, result);
        return result;
      },
      { onRollbackError: markBroken },
    ),
  );
}

async function writeInTransaction(
  client: ClientBase,
  schema: string,
  catalogue: Catalogue,
  options: WriteOptions,
): Promise<WriteResult> {
  const size = options.chunkSize ?? 500;
  const account = options.account ?? DEFAULT_ACCOUNT;
  const run = (s: Statement) => client.query(s.text, [...s.values]);
  // SET LOCAL takes no parameters; the value is a validated integer.
  await client.query(`SET LOCAL statement_timeout = ${Math.trunc(options.statementTimeoutMs ?? 300_000)}`);
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`adops-entities:${schema}:${account}`]);

  const campaignRows = catalogue.campaigns.map((c) => c.row);
  const campaignIds = campaignRows.map((r) => r.campaign_id);
  const creativeIds = catalogue.creatives.map((r) => r.creative_id);

  let revived = 0;
  for (const [t, ids] of [
    [CAMPAIGNS, campaignIds],
    [CREATIVES, creativeIds],
  ] as const) {
    const s = countRevivedStatement(schema, account, t, ids);
    const { rows } = await client.query<{ n: number }>(s.text, [...s.values]);
    revived += rows[0]?.n ?? 0;
  }

  for (const part of chunks(campaignRows, size)) await run(upsertStatement(schema, account, CAMPAIGNS, part));
  for (const part of chunks(catalogue.creatives, size))
    await run(upsertStatement(schema, account, CREATIVES, part));

  await run(clearZonesStatement(schema, account, campaignIds));
  const pairs = catalogue.campaigns.flatMap((c) => c.zoneIds.map((z) => [c.row.campaign_id, z] as const));
  for (const part of chunks(pairs, size * 10)) await run(insertZonesStatement(schema, account, part));

  let deleted = 0;
  deleted += (await run(softDeleteStatement(schema, account, CAMPAIGNS))).rowCount ?? 0;
  deleted += (await run(softDeleteStatement(schema, account, CREATIVES))).rowCount ?? 0;

  // The history sees the catalogue as this transaction leaves it, deletions included.
  for (const h of [CAMPAIGN_HISTORY, CREATIVE_HISTORY]) {
    await run(closeChangedVersions(schema, account, h));
    await run(openVersions(schema, account, h));
  }

  return { campaigns: campaignRows.length, creatives: creativeIds.length, deleted, revived };
}
