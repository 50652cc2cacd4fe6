// Catalogue sync runs: opened, resumed or refused, their staged pages, their end, and their `adops status`.
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { type Warehouse, execute, firstRow, inTransaction, rowsOf } from '../platform/pg/handle.js';
import type { EntitySyncResult, ProblemSummary } from './stored-rows.js';
import type { StagedPage } from './checkpoint.js';
import * as sql from './sql.js';

/** Finished runs kept in entity_sync_runs (for `adops status` and debugging); older ones go. */
const KEPT_RUNS = 100;

/** How a sync run starts: afresh, resumed from an earlier try's `pages`, restarted, or written already. */
export type RunStart =
  | { readonly kind: 'new' }
  | { readonly kind: 'resumed'; readonly pages: readonly StagedPage[]; readonly tries: number }
  | { readonly kind: 'restarted'; readonly tries: number }
  | { readonly kind: 'written'; readonly result: EntitySyncResult };

/** Opens run `runId`, resuming a checkpoint younger than `staleAfterMs`; drops abandoned and old runs. */
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

function itemsOf(text: string): unknown[] {
  const items: unknown = JSON.parse(text);
  return Array.isArray(items) ? items : [];
}

/** The listing number of GET /campaigns in the staging; creative listings use their campaign id. */
export const CAMPAIGN_LISTING = 0;

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
  readonly latest:
    | (Pick<sql.RunRow, 'runId' | 'tries' | 'requests' | 'campaignsDone' | 'campaignsTotal' | 'error'> & {
        readonly state: 'running' | 'interrupted' | 'failed';
        readonly startedAt: string;
        readonly updatedAt: string;
      })
    | null;
}

export async function entitySyncStatus(wh: Warehouse): Promise<EntitySyncStatus> {
  const rows = await rowsOf(wh, sql.newestRuns(wh.schema, QUIET_AFTER_MS));
  const w = rows.find((r) => r.status === 'written');
  const l = rows.at(-1);
  return {
    lastWritten:
      w === undefined
        ? null
        : {
            runId: w.runId,
            finishedAt: (w.finished_at ?? w.updated_at).toISOString(),
            result: w.result ?? {},
            problems: w.problems,
          },
    latest:
      l === undefined || l.status === 'written'
        ? null
        : {
            runId: l.runId,
            state: l.status === 'failed' ? 'failed' : l.quiet ? 'interrupted' : 'running',
            startedAt: l.started_at.toISOString(),
            updatedAt: l.updated_at.toISOString(),
            tries: l.tries,
            requests: l.requests,
            campaignsDone: l.campaignsDone,
            campaignsTotal: l.campaignsTotal,
            error: l.error,
          },
  };
}
