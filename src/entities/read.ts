import { ApiError } from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import type { RawCatalogue } from '../warehouse/entities/catalogue.js';
import { readId } from '../warehouse/entities/fields.js';
import { mapLimit } from './limit.js';

/**
 * The part of the API client a sync uses: paged listings. ApiClient satisfies it; tests may pass
 * the real client only (no mocks), but the narrow type keeps this module honest about its needs.
 */
export interface CatalogueApi {
  campaigns(pageSize?: number): AsyncIterable<readonly unknown[]>;
  creatives(campaignId: number, pageSize?: number): AsyncIterable<readonly unknown[]>;
}

export interface ReadOptions {
  /** Campaigns whose creatives are listed at the same time. */
  readonly campaignConcurrency: number;
  readonly pageSize?: number;
  readonly logger: Logger;
}

/**
 * Reads the whole catalogue: every page of campaigns, then the creatives of each campaign, a
 * bounded number of campaigns at a time. Any error that survives the client's retries rejects
 * the whole read, so a partial catalogue never reaches the warehouse.
 */
export async function readCatalogue(api: CatalogueApi, options: ReadOptions): Promise<RawCatalogue> {
  const campaigns: unknown[] = [];
  for await (const page of api.campaigns(options.pageSize)) campaigns.push(...page);
  options.logger.debug({ campaigns: campaigns.length }, 'campaigns listed');

  const ids = [...new Set(campaigns.map((c) => readId('campaign', c, 'campaign_id')))];
  const gone = new Set<number>();
  const listings = await mapLimit(ids, options.campaignConcurrency, async (id) => {
    const creatives: unknown[] = [];
    try {
      for await (const page of api.creatives(id, options.pageSize)) creatives.push(...page);
    } catch (error) {
      // The campaign was deleted after the campaign listing: treat it as not returned at all,
      // so it and its creatives are soft-deleted rather than stored with no creatives.
      if (!isNotFound(error)) throw error;
      gone.add(id);
      options.logger.info({ campaignId: id }, 'campaign disappeared during the sync; treating it as deleted');
    }
    return [id, creatives] as const;
  });
  return {
    campaigns: campaigns.filter((c) => !gone.has(readId('campaign', c, 'campaign_id'))),
    creativesByCampaign: new Map(listings.filter(([id]) => !gone.has(id))),
  };
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
