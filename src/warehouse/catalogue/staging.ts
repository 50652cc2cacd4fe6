import type { ClientBase, Pool } from 'pg';
import { qualified } from '../pg.js';
import { storableJson } from './storable.js';

/** The listing number of GET /campaigns in the staging; creative listings use their campaign id. */
export const CAMPAIGN_LISTING = 0;

/** One page of a listing as a sync read it, kept so a resumed sync need not read it again. */
export interface StagedPage {
  /** CAMPAIGN_LISTING, or the campaign id whose creatives the page lists. */
  readonly listing: number;
  readonly offset: number;
  /** The page's items as returned, minus those earlier pages of the listing already had. */
  readonly items: readonly unknown[];
  /** Items the API returned on the page: the next page starts `size` further on. */
  readonly size: number;
  /** The listing's last page. */
  readonly last: boolean;
  /** The creative listing answered 404: the campaign was deleted during the sync. */
  readonly gone: boolean;
}

/** How far a run got, stored beside its pages for `adops status`. */
export interface RunProgress {
  readonly requests: number;
  readonly campaignsDone: number;
  readonly campaignsTotal: number | null;
}

/**
 * Stages `pages` of run `runId` (a page read again replaces the staged one) and records the run's
 * progress, in one statement. A page whose items hold text jsonb cannot (a NUL, an unpaired
 * surrogate: storable.ts) is staged as a jsonb string of their JSON text, which escapes both, so
 * the checkpoint stays exact: a later try reads the items as sent, and repairs and reports them
 * as the first would have.
 */
export async function stagePages(
  pool: Pool,
  schema: string,
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
  const { rows } = await client.query<{
    listing: string;
    page_offset: number;
    // A string: the items' JSON text, staged so because jsonb could not hold them (see stagePages).
    items: unknown[] | string;
    size: number;
    last: boolean;
    gone: boolean;
  }>(
    `SELECT listing, page_offset, items, size, last, gone FROM ${qualified(schema, 'entity_sync_pages')}
      WHERE run_id = $1 ORDER BY listing, page_offset`,
    [runId],
  );
  return rows.map((r) => ({
    listing: Number(r.listing),
    offset: r.page_offset,
    items: typeof r.items === 'string' ? (JSON.parse(r.items) as unknown[]) : r.items,
    size: r.size,
    last: r.last,
    gone: r.gone,
  }));
}
