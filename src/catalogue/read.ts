import { ApiError } from '../api/errors.js';
import { entityId, listPages } from '../api/pages.js';
import type { Logger } from '../log/logger.js';
import type { RawCatalogue } from './catalogue.js';
import { CAMPAIGN_LISTING } from '../warehouse/catalogue/staging.js';
import type { Checkpoint } from './checkpoint.js';
import { mapLimit } from './limit.js';
import type { Requester } from './request.js';

/** A list page request. */
export interface Page {
  readonly limit: number;
  readonly offset: number;
}

/**
 * The part of the API client a sync uses: one list page per call. ApiClient satisfies it; the
 * narrow type keeps this module honest about its needs.
 */
export interface CatalogueApi {
  listCampaigns(page: Page): Promise<readonly unknown[]>;
  listCreatives(campaignId: number, page: Page): Promise<readonly unknown[]>;
}

export interface ReadOptions {
  readonly api: CatalogueApi;
  /** Sends each request, with the sync's retries. */
  readonly request: Requester;
  /** What earlier tries staged, and where new pages are staged. */
  readonly checkpoint: Checkpoint;
  /** Campaigns whose creatives are listed at the same time. */
  readonly campaignConcurrency: number;
  readonly pageSize: number;
  readonly logger: Logger;
  /** Told when the campaign listing is complete and as each campaign's creatives are listed. */
  readonly onListed: (done: number, total: number) => void;
}

/** Field of an item that holds its id, by listing. */
const idOf = (field: string) => (item: unknown) =>
  typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;

/**
 * Reads the whole catalogue: every page of campaigns, then the creatives of each campaign, a
 * bounded number of campaigns at a time. Pages an earlier try staged are taken from the
 * checkpoint, not read again; every page read is staged. A campaign whose id cannot be read is
 * passed on (the mapping skips and reports it) but its creatives cannot be listed. An error that
 * survives the requester's retries rejects the read once the requests in flight settle, after the
 * pages read so far are staged, so the next try resumes from there.
 */
export async function readCatalogue(o: ReadOptions): Promise<RawCatalogue> {
  let read: RawCatalogue;
  try {
    read = await readAll(o);
  } catch (error) {
    // What was read is staged for the next try; the read's own error is the one worth seeing.
    await o.checkpoint.flush().catch(() => undefined);
    throw error;
  }
  await o.checkpoint.flush();
  return read;
}

/** Both listings, campaigns first; see readCatalogue. */
async function readAll(o: ReadOptions): Promise<RawCatalogue> {
  const campaigns = await readListing(o, CAMPAIGN_LISTING, (p) => o.api.listCampaigns(p), 'campaign_id');
  if (campaigns === 'gone') throw new Error('the campaign listing cannot be gone');
  const ids = [
    ...new Set(campaigns.map((c) => entityId(idOf('campaign_id')(c))).filter((id) => id !== undefined)),
  ];
  o.logger.debug({ campaigns: ids.length }, 'campaigns listed');
  let done = ids.filter((id) => o.checkpoint.listing(id).last).length;
  o.onListed(done, ids.length);

  const gone = new Set<number>();
  const listings = await mapLimit(ids, o.campaignConcurrency, async (id): Promise<[number, unknown[]]> => {
    const staged = o.checkpoint.listing(id).last;
    const creatives = await readListing(o, id, (p) => o.api.listCreatives(id, p), 'creative_id');
    if (!staged) o.onListed(++done, ids.length);
    if (creatives !== 'gone') return [id, creatives];
    // The campaign was deleted after the campaign listing: treat it as not returned at all,
    // so it and its creatives are soft-deleted rather than stored with no creatives.
    gone.add(id);
    o.logger.info({ campaignId: id }, 'campaign disappeared during the sync; treating it as deleted');
    return [id, []];
  });
  return {
    campaigns: campaigns.filter((c) => !gone.has(entityId(idOf('campaign_id')(c)) ?? -1)),
    creativesByCampaign: new Map(listings.filter(([id]) => !gone.has(id))),
  };
}

/** Every item of one listing: staged pages first, then the rest from the API, each page staged. */
async function readListing(
  o: ReadOptions,
  listing: number,
  fetchPage: (p: Page) => Promise<readonly unknown[]>,
  idField: string,
): Promise<unknown[] | 'gone'> {
  const state = o.checkpoint.listing(listing);
  if (state.gone) return 'gone';
  const items = [...state.items];
  if (state.last) return items;
  const seen = items
    .map(idOf(idField))
    .map(entityId)
    .filter((id) => id !== undefined);
  const where = {
    method: 'GET',
    path: listing === CAMPAIGN_LISTING ? '/campaigns' : `/campaigns/${listing}/creatives`,
  };
  try {
    const pages = listPages(
      (p) => o.request(async () => [...(await fetchPage(p))]),
      idOf(idField),
      o.pageSize,
      where,
      { offset: state.next, seen },
    );
    for await (const page of pages) {
      items.push(...page.items);
      await o.checkpoint.add({ listing, ...page, gone: false });
    }
  } catch (error) {
    if (listing === CAMPAIGN_LISTING || !(error instanceof ApiError) || error.status !== 404) throw error;
    await o.checkpoint.add({ listing, offset: -1, items: [], size: 0, last: true, gone: true });
    return 'gone';
  }
  return items;
}
