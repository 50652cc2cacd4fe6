import { mapCampaign, type MappedCampaign } from './campaign-row.js';
import { mapCreative, type CreativeRow } from './creative-row.js';

/** Everything one sync read, validated and typed, ready for the one-transaction write. */
export interface Catalogue {
  readonly campaigns: readonly MappedCampaign[];
  readonly creatives: readonly CreativeRow[];
}

/** What the API returned: every campaign, and the creatives listed under each campaign id. */
export interface RawCatalogue {
  readonly campaigns: readonly unknown[];
  readonly creativesByCampaign: ReadonlyMap<number, readonly unknown[]>;
}

/**
 * Validates and maps a whole read. Offset paging over a list that changes between pages can show
 * an entity twice; the last copy wins, so each id becomes exactly one row (Postgres refuses an
 * upsert that touches a row twice). Throws EntityFieldError on the first field of a wrong type.
 */
export function buildCatalogue(raw: RawCatalogue): Catalogue {
  const campaigns = new Map<number, MappedCampaign>();
  for (const c of raw.campaigns) {
    const mapped = mapCampaign(c);
    campaigns.set(mapped.row.campaign_id, mapped);
  }
  const creatives = new Map<number, CreativeRow>();
  for (const [campaignId, list] of raw.creativesByCampaign) {
    // A listing of a campaign that is not in the campaign list (deleted between the two reads)
    // is dropped: its creatives then read as deleted, like their campaign.
    if (!campaigns.has(campaignId)) continue;
    for (const item of list) {
      const row = mapCreative(item, campaignId);
      creatives.set(row.creative_id, row);
    }
  }
  return { campaigns: [...campaigns.values()], creatives: [...creatives.values()] };
}
