// One catalogue sync (adops sync): read it all, resuming the checkpoint, map it, write it in one transaction.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../platform/log/logger.js';
import { redactSecrets } from '../platform/log/redact.js';
import { classifyFailure } from '../platform/retry/classify.js';
import { createLocalGate, type RequestGate } from '../limits/limiter.js';
import { buildCatalogue } from './rows.js';
import { ProblemLog, problemText } from './fields.js';
import { openRun } from './runs.js';
import {
  CAMPAIGN_COLUMNS,
  CREATIVE_COLUMNS,
  type Catalogue,
  type EntitySyncResult,
  type WriteResult,
} from './stored-rows.js';
import type { ClientBase } from 'pg';
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { execute, firstRow, inTransaction, type Warehouse } from '../platform/pg/handle.js';
import * as sql from './sql.js';
import { Checkpoint, type FlushPolicy, type SyncProgress, throttled } from './checkpoint.js';
import {
  type CatalogueApi,
  type RequestCounts,
  SYNC_RETRY,
  type SyncRetryPolicy,
  createRequester,
  readCatalogue,
} from './read.js';

export type { EntitySyncResult } from './stored-rows.js';

export interface EntitySyncDeps {
  readonly wh: Warehouse;
  readonly api: CatalogueApi;
  readonly logger: Logger;
  /** Campaigns whose creatives are listed at once (default 4), and the page size (default 100). */
  readonly campaignConcurrency?: number;
  readonly pageSize?: number;
  /** The run's id: a queued sync passes its job id, so its retries resume the checkpoint. Default: fresh. */
  readonly runId?: string;
  /** The account whose catalogue this is (DEFAULT_ACCOUNT when not given): only its rows are written. */
  readonly account?: string;
  /** Whether another try follows a failure (default: with a runId); if not, the run is marked failed. */
  readonly resumable?: boolean;
  /** Where requests wait for the rate limit and a 429's pause (default: a local gate). */
  readonly gate?: RequestGate;
  readonly retry?: Partial<SyncRetryPolicy>;
  /** Called as the sync goes (at most every 250 ms, and at each phase). */
  readonly onProgress?: (p: SyncProgress) => void;
  /** A checkpoint whose run started longer ago than this is discarded (default 6 hours). */
  readonly staleAfterMs?: number;
  readonly flush?: FlushPolicy;
  /** Strings never to store (the API key): redacted from the error a failed run records. */
  readonly secrets?: readonly string[];
}

/** Exports the catalogue: read, map, write and end the run in one transaction; nothing lands on a failure. */
export async function runEntitySync(deps: EntitySyncDeps): Promise<EntitySyncResult> {
  const runId = deps.runId ?? `d-${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  const logger = deps.logger.child({ sync: 'entities', runId, account: deps.account ?? 'default' });
  const { wh } = deps;
  const start = await openRun(wh, runId, deps.staleAfterMs ?? 6 * 3600_000, deps.account);
  if (start.kind === 'written') {
    logger.info('an earlier try of this sync already wrote the catalogue');
    return start.result;
  }
  const started = Date.now();
  const counts: RequestCounts = { requests: 0, retries: 0, rateLimited: 0 };
  let progress: SyncProgress = {
    phase: 'campaigns',
    startedAt: started,
    requests: 0,
    campaignsDone: 0,
    campaignsTotal: null,
    resumed: 0,
  };
  const emit = throttled((p) => deps.onProgress?.(p));
  const update = (patch: Partial<SyncProgress>, force = false) => {
    progress = { ...progress, ...patch, requests: counts.requests };
    emit(progress, force);
  };
  const checkpoint = new Checkpoint(
    (pages) =>
      execute(wh, sql.stagePages(wh.schema, runId, pages, { ...progress, requests: counts.requests })),
    start.kind === 'resumed' ? start.pages : [],
    deps.flush,
  );
  if (start.kind !== 'new')
    logger.info({ try: start.tries, stagedPages: checkpoint.resumedPages }, `sync ${start.kind}`);
  update({}, true);
  try {
    const raw = await readCatalogue({
      api: deps.api,
      request: createRequester(deps.gate ?? createLocalGate(), { ...SYNC_RETRY, ...deps.retry }, counts),
      checkpoint,
      campaignConcurrency: deps.campaignConcurrency ?? 4,
      pageSize: deps.pageSize ?? 100,
      logger,
      onListed: (done, total) => {
        // The first call says how many campaigns the checkpoint had done: this try's `resumed`.
        const first = progress.campaignsTotal === null;
        const patch = { phase: 'creatives', campaignsDone: done, campaignsTotal: total } as const;
        update(first ? { ...patch, resumed: done } : patch, first);
      },
    });
    const fetchMs = Date.now() - started;
    update({ phase: 'writing' }, true);
    const problems = new ProblemLog();
    const catalogue = buildCatalogue(raw, problems);
    if (catalogue.campaigns.length === 0)
      logger.warn('the API returned no campaigns: every stored campaign and creative is marked deleted');
    const summary = problems.summary();
    const resultOf = (written: WriteResult): EntitySyncResult => ({
      ...written,
      problems: summary.count,
      skipped: summary.skipped,
      requests: counts.requests,
      resumedPages: checkpoint.resumedPages,
    });
    const result = resultOf(
      await writeCatalogue(wh, catalogue, {
        ...(deps.account === undefined ? {} : { account: deps.account }),
        beforeCommit: (client, written) =>
          execute(client, sql.finishRun(wh.schema, runId, resultOf(written), summary)),
      }),
    );
    if (summary.count > 0)
      logger.warn(
        {
          problems: summary.count,
          skipped: summary.skipped,
          repaired: summary.repaired,
          byField: summary.byField,
          first: summary.examples.slice(0, 5).map(problemText),
        },
        'entity sync: some fields could not be read as sent; stored as NULL, or text repaired (NULs removed, U+FFFD for unpaired surrogates); entities with an unreadable id skipped; see adops status',
      );
    logger.info(
      {
        ...result,
        retries: counts.retries,
        rateLimited: counts.rateLimited,
        fetchMs,
        totalMs: Date.now() - started,
      },
      'entity sync written',
    );
    return result;
  } catch (error) {
    const kind = classifyFailure(error).kind;
    const resumable = deps.resumable ?? deps.runId !== undefined;
    // A run not tried again gives up its checkpoint; a 429 that outlasted the waits, or a shutdown, resumes.
    if (kind === 'fatal' || (!resumable && kind !== 'rate-limited' && kind !== 'aborted')) {
      const message = redactSecrets(
        error instanceof Error ? error.message : String(error),
        deps.secrets ?? [],
      );
      await execute(wh, sql.failRun(wh.schema, runId, message)).catch((e: unknown) =>
        logger.warn({ err: e }, 'could not record the failed sync run'),
      );
    }
    throw error;
  }
}

export interface WriteOptions {
  /** The account the catalogue belongs to (DEFAULT_ACCOUNT when not given): only its rows are touched. */
  readonly account?: string;
  /** Runs in the transaction after the writes, before COMMIT (e.g. ending the sync's checkpoint). */
  readonly beforeCommit?: (client: ClientBase, result: WriteResult) => Promise<unknown>;
}

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

/** Writes a whole catalogue in one transaction, so readers never see half; one account's syncs serialised. */
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
