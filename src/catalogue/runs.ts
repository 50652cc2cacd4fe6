// Catalogue sync runs: a run opened, resumed or refused, its staged pages (the checkpoint a
// resumed sync reads instead of the API), its end, and what `adops status` shows of the runs.
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import {
  type Queryable,
  type Warehouse,
  execute,
  firstRow,
  inTransaction,
  rowsOf,
} from '../platform/pg/handle.js';
import { type EntitySyncResult, type ProblemSummary, storableJson } from './stored-rows.js';
import * as sql from './sql.js';

/** Finished runs kept in entity_sync_runs (for `adops status` and debugging); older ones go. */
const KEPT_RUNS = 100;

/** How a sync run starts: afresh, from its checkpoint, or already written by an earlier try. */
export type RunStart =
  | { readonly kind: 'new' }
  /** An earlier try of this run staged `pages`: they need not be read again. */
  | { readonly kind: 'resumed'; readonly pages: readonly StagedPage[]; readonly tries: number }
  /** The run's checkpoint was stale (or the run had failed): it starts again from nothing. */
  | { readonly kind: 'restarted'; readonly tries: number }
  /** An earlier try wrote the catalogue (and died before its job was marked done). */
  | { readonly kind: 'written'; readonly result: EntitySyncResult };

/**
 * Opens run `runId`, taking up an earlier try's checkpoint if that try started within `staleAfterMs`
 * (older pages are never mixed into a catalogue). Also drops abandoned runs and finished runs
 * beyond the newest KEPT_RUNS.
 */
export async function openRun(
  wh: Warehouse,
  runId: string,
  staleAfterMs: number,
  account: string = DEFAULT_ACCOUNT,
): Promise<RunStart> {
  const { schema } = wh;
  return inTransaction(wh.pool, async (client) => {
    await execute(client, sql.dropAbandonedRuns(schema, runId, staleAfterMs));
    await execute(client, sql.dropOldRuns(schema, KEPT_RUNS));
    const run = await firstRow(client, sql.lockRun(schema, runId, staleAfterMs));
    if (run === undefined) {
      await execute(client, sql.insertRun(schema, runId, account));
      return { kind: 'new' };
    }
    if (run.status === 'written') return { kind: 'written', result: run.result };
    if (run.stale || run.status === 'failed') {
      await execute(client, sql.restartRun(schema, runId));
      return { kind: 'restarted', tries: run.tries + 1 };
    }
    await execute(client, sql.resumeRun(schema, runId));
    const pages = (await rowsOf(client, sql.stagedPages(schema, runId))).map((r) => ({
      ...r,
      items: typeof r.items === 'string' ? itemsOf(r.items) : r.items,
    }));
    return { kind: 'resumed', pages, tries: run.tries + 1 };
  });
}

/** Items staged as JSON text (see stagePages). */
function itemsOf(text: string): unknown[] {
  const items: unknown = JSON.parse(text);
  return Array.isArray(items) ? items : [];
}

/** Marks run `runId` written and drops its checkpoint, inside the catalogue's write transaction. */
export async function finishRun(
  client: Queryable,
  wh: Warehouse,
  runId: string,
  result: EntitySyncResult,
  problems: ProblemSummary,
): Promise<void> {
  await execute(client, sql.finishRun(wh.schema, runId, result, problems));
}

/** Marks run `runId` failed for good with `reason` and drops its checkpoint (it will not resume). */
export async function failRun(wh: Warehouse, runId: string, reason: string): Promise<void> {
  await execute(wh, sql.failRun(wh.schema, runId, reason));
}

/** The listing number of GET /campaigns in the staging; creative listings use their campaign id. */
export const CAMPAIGN_LISTING = 0;

/**
 * One staged page of a listing (CAMPAIGN_LISTING, or a campaign id): its new items, `size` items
 * the API returned (where the next page starts), whether it is the last, and `gone` for a 404.
 */
export interface StagedPage {
  readonly listing: number;
  readonly offset: number;
  readonly items: readonly unknown[];
  readonly size: number;
  readonly last: boolean;
  readonly gone: boolean;
}

/** How far a run got, stored beside its pages for `adops status`. */
interface RunProgress {
  readonly requests: number;
  readonly campaignsDone: number;
  readonly campaignsTotal: number | null;
}

/**
 * Stages `pages` and the run's progress in one statement. Items with text jsonb cannot hold (a NUL,
 * an unpaired surrogate) are staged as a JSON string, so a later try reads them exactly as sent.
 */
export async function stagePages(
  wh: Warehouse,
  runId: string,
  pages: readonly StagedPage[],
  progress: RunProgress,
): Promise<void> {
  const rows = pages.map((p) => ({
    listing: p.listing,
    page_offset: p.offset,
    items: storableJson(p.items) === p.items ? p.items : JSON.stringify(p.items),
    size: p.size,
    last: p.last,
    gone: p.gone,
  }));
  await execute(wh, sql.stagePages(wh.schema, runId, rows, progress));
}

/** A running run with no page staged for this long is shown as interrupted. */
const QUIET_AFTER_MS = 2 * 60_000;

/** The catalogue part of `adops status`: the newest written sync, and a newer run that has not written. */
export interface EntitySyncStatus {
  readonly lastWritten: {
    readonly runId: string;
    readonly finishedAt: string;
    readonly result: Readonly<Record<string, number>>;
    readonly problems: ProblemSummary | null;
  } | null;
  readonly latest: {
    readonly runId: string;
    readonly state: 'running' | 'interrupted' | 'failed';
    readonly startedAt: string;
    readonly updatedAt: string;
    readonly tries: number;
    readonly requests: number;
    readonly campaignsDone: number;
    readonly campaignsTotal: number | null;
    readonly error: string | null;
  } | null;
}

/** Reads the newest written sync run and any newer one that has not written. */
export async function entitySyncStatus(wh: Warehouse): Promise<EntitySyncStatus> {
  const rows = await rowsOf(wh, sql.newestRuns(wh.schema, QUIET_AFTER_MS));
  const written = rows.find((r) => r.status === 'written');
  const newest = rows.at(-1);
  return {
    lastWritten:
      written === undefined
        ? null
        : {
            runId: written.runId,
            finishedAt: (written.finished_at ?? written.updated_at).toISOString(),
            result: written.result ?? {},
            problems: written.problems,
          },
    latest:
      newest === undefined || newest.status === 'written'
        ? null
        : {
            runId: newest.runId,
            state: newest.status === 'failed' ? 'failed' : newest.quiet ? 'interrupted' : 'running',
            startedAt: newest.started_at.toISOString(),
            updatedAt: newest.updated_at.toISOString(),
            tries: newest.tries,
            requests: newest.requests,
            campaignsDone: newest.campaignsDone,
            campaignsTotal: newest.campaignsTotal,
            error: newest.error,
          },
  };
}
