import { mapCampaign } from './campaign-row.js';
import { mapCreative } from './creative-row.js';
import type { ProblemSink } from './field-problem.js';
import type { Catalogue, CreativeRow, MappedCampaign } from '../warehouse/catalogue/rows.js';

/** What the API returned: every campaign, and the creatives listed under each campaign id. */
export interface RawCatalogue {
  readonly campaigns: readonly unknown[];
  readonly creativesByCampaign: ReadonlyMap<number, readonly unknown[]>;
}

/**
 * Validates and maps a whole read. Offset paging over a list that changes between pages can show
 * an entity twice; the last copy wins, so each id becomes exactly one row (Postgres refuses an
 * upsert that touches a row twice). Fields that cannot be read go to `problems` and read as NULL;
 * an entity whose id cannot be read is skipped (and reported), never the whole catalogue.
 */
export function buildCatalogue(raw: RawCatalogue, problems: ProblemSink): Catalogue {
  const campaigns = new Map<number, MappedCampaign>();
  for (const c of raw.campaigns) {
    const mapped = mapCampaign(c, problems);
    if (mapped !== undefined) campaigns.set(mapped.row.campaign_id, mapped);
  }
  const creatives = new Map<number, CreativeRow>();
  for (const [campaignId, list] of raw.creativesByCampaign) {
    // A listing of a campaign that is not in the campaign list (deleted between the two reads)
    // is dropped: its creatives then read as deleted, like their campaign.
    if (!campaigns.has(campaignId)) continue;
    for (const item of list) {
      const row = mapCreative(item, campaignId, problems);
      if (row !== undefined) creatives.set(row.creative_id, row);
    }
  }
  return { campaigns: [...campaigns.values()], creatives: [...creatives.values()] };
}
