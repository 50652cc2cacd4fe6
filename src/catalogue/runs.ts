// Catalogue sync runs: a run opened, resumed or refused, its staged pages (the checkpoint a
// resumed sync reads instead of the API), its end, and what `adops status` shows of the runs.
import type { ClientBase } from 'pg';
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { type Warehouse, inTransaction, qualified } from '../platform/pg/handle.js';
import { type ProblemSummary, storableJson } from './stored-rows.js';

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
  | { readonly kind: 'written'; readonly result: unknown };

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
  const { pool, schema } = wh;
  const runs = qualified(schema, 'entity_sync_runs');
  const pages = qualified(schema, 'entity_sync_pages');
  const stale = 'now() - make_interval(secs => $2::double precision / 1000)';
  return inTransaction(pool, async (client) => {
    await client.query(
      `DELETE FROM ${runs} WHERE status = 'running' AND updated_at < ${stale} AND run_id <> $1`,
      [runId, staleAfterMs],
    );
    await client.query(
      `DELETE FROM ${runs} WHERE status <> 'running' AND run_id NOT IN (
             SELECT run_id FROM ${runs} WHERE status <> 'running' ORDER BY started_at DESC LIMIT $1)`,
      [KEPT_RUNS],
    );
    const { rows } = await client.query<{
      status: string;
      tries: number;
      stale: boolean;
      result: unknown;
    }>(
      `SELECT status, tries, started_at < ${stale} AS stale, result FROM ${runs} WHERE run_id = $1 FOR UPDATE`,
      [runId, staleAfterMs],
    );
    const run = rows[0];
    if (run === undefined) {
      await client.query(`INSERT INTO ${runs} (run_id, account) VALUES ($1, $2)`, [runId, account]);
      return { kind: 'new' };
    }
    if (run.status === 'written') return { kind: 'written', result: run.result };
    if (run.stale || run.status === 'failed') {
      await client.query(`DELETE FROM ${pages} WHERE run_id = $1`, [runId]);
      await client.query(
        `UPDATE ${runs} SET status = 'running', started_at = now(), updated_at = now(), finished_at = NULL,
                    tries = tries + 1, requests = 0, campaigns_done = 0, campaigns_total = NULL, error = NULL
              WHERE run_id = $1`,
        [runId],
      );
      return { kind: 'restarted', tries: run.tries + 1 };
    }
    await client.query(`UPDATE ${runs} SET tries = tries + 1, updated_at = now() WHERE run_id = $1`, [runId]);
    return { kind: 'resumed', pages: await stagedPages(client, schema, runId), tries: run.tries + 1 };
  });
}

/** Marks run `runId` written and drops its checkpoint, inside the catalogue's write transaction. */
export async function finishRun(
  client: ClientBase,
  schema: string,
  runId: string,
  result: object,
  problems: ProblemSummary,
): Promise<void> {
  await client.query(
    `UPDATE ${qualified(schema, 'entity_sync_runs')}
        SET status = 'written', finished_at = now(), updated_at = now(), result = $2,
            problem_count = $3, problems = $4, error = NULL
      WHERE run_id = $1`,
    [runId, JSON.stringify(result), problems.count, JSON.stringify(problems)],
  );
  await client.query(`DELETE FROM ${qualified(schema, 'entity_sync_pages')} WHERE run_id = $1`, [runId]);
}

/** Marks run `runId` failed for good with `reason` and drops its checkpoint (it will not resume). */
export async function failRun(wh: Warehouse, runId: string, reason: string): Promise<void> {
  const { pool, schema } = wh;
  await pool.query(
    `WITH gone AS (DELETE FROM ${qualified(schema, 'entity_sync_pages')} WHERE run_id = $1)
     UPDATE ${qualified(schema, 'entity_sync_runs')}
        SET status = 'failed', finished_at = now(), updated_at = now(), error = $2
      WHERE run_id = $1`,
    [runId, reason],
  );
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
  const { pool, schema } = wh;
  const rows = pages.map((p) => ({
    listing: p.listing,
    page_offset: p.offset,
    items: storableJson(p.items) === p.items ? p.items : JSON.stringify(p.items),
    size: p.size,
    last: p.last,
    gone: p.gone,
  }));
  await pool.query(
    `WITH staged AS (
       INSERT INTO ${qualified(schema, 'entity_sync_pages')} (run_id, listing, page_offset, items, size, last, gone)
       SELECT $1, listing, page_offset, items, size, last, gone
         FROM jsonb_to_recordset($2::jsonb)
           AS r(listing bigint, page_offset integer, items jsonb, size integer, last boolean, gone boolean)
       ON CONFLICT (run_id, listing, page_offset) DO UPDATE
         SET items = EXCLUDED.items, size = EXCLUDED.size, last = EXCLUDED.last, gone = EXCLUDED.gone
     )
     UPDATE ${qualified(schema, 'entity_sync_runs')}
        SET updated_at = now(), requests = $3, campaigns_done = $4, campaigns_total = $5
      WHERE run_id = $1`,
    [runId, JSON.stringify(rows), progress.requests, progress.campaignsDone, progress.campaignsTotal],
  );
}

/** Every page staged for run `runId`, in listing and offset order. */
export async function stagedPages(client: ClientBase, schema: string, runId: string): Promise<StagedPage[]> {
  // listing is a bigint (text to pg); items is a string when staged as JSON text (see stagePages).
  const { rows } = await client.query<
    Omit<StagedPage, 'listing' | 'items'> & { listing: string; items: unknown[] | string }
  >(
    `SELECT listing, page_offset AS "offset", items, size, last, gone FROM ${qualified(schema, 'entity_sync_pages')}
      WHERE run_id = $1 ORDER BY listing, page_offset`,
    [runId],
  );
  return rows.map((r) => ({
    ...r,
    listing: Number(r.listing),
    items: typeof r.items === 'string' ? (JSON.parse(r.items) as unknown[]) : r.items,
  }));
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
  const { pool, schema } = wh;
  const runs = qualified(schema, 'entity_sync_runs');
  const columns = `run_id AS "runId", status, started_at, updated_at, finished_at, tries, requests,
    campaigns_done AS "campaignsDone", campaigns_total AS "campaignsTotal", result, problems, error,
    updated_at < now() - make_interval(secs => $1::double precision / 1000) AS quiet`;
  const { rows } = await pool.query<
    Pick<
      NonNullable<EntitySyncStatus['latest']>,
      'runId' | 'tries' | 'campaignsDone' | 'campaignsTotal' | 'error'
    > & {
      status: string;
      started_at: Date;
      updated_at: Date;
      finished_at: Date | null;
      requests: string;
      result: Record<string, number> | null;
      problems: ProblemSummary | null;
      quiet: boolean;
    }
  >(
    `(SELECT ${columns} FROM ${runs} WHERE status = 'written' ORDER BY finished_at DESC LIMIT 1)
     UNION ALL
     (SELECT ${columns} FROM ${runs} ORDER BY started_at DESC LIMIT 1)`,
    [QUIET_AFTER_MS],
  );
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
            requests: Number(newest.requests),
            campaignsDone: newest.campaignsDone,
            campaignsTotal: newest.campaignsTotal,
            error: newest.error,
          },
  };
}
