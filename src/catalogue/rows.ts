// Campaigns and creatives as the API returns them, mapped to their typed catalogue rows.
import {
  FieldReader,
  INTEGER,
  type ProblemSink,
  SMALLINT,
  fieldProblem,
  isObject,
  readId,
  storableEntity,
} from './fields.js';
import type { CampaignRow, Catalogue, CreativeRow, JsonObject, MappedCampaign } from './stored-rows.js';

/** A campaign as its typed row (unreadable fields NULL and reported); undefined when its id is unreadable. */
export function mapCampaign(campaign: unknown, problems: ProblemSink): MappedCampaign | undefined {
  const id = readId('campaign', campaign, 'campaign_id', problems);
  if (id === undefined || !isObject(campaign)) return undefined;
  const c = storableEntity('campaign', id, campaign, problems);
  const r = new FieldReader('campaign', id, problems);
  const delivery = r.objectOrUnset(c, 'delivery') ?? EMPTY;
  const events = r.objectOrUnset(c, 'event_counts') ?? EMPTY;
  const pricing = r.objectOrUnset(c, 'pricing') ?? EMPTY;
  const pacing = r.objectOrUnset(c, 'pacing') ?? EMPTY;
  const event = (key: string) => r.int(events, key, `event_counts.${key}`);
  const row: CampaignRow = {
    campaign_id: id,
    name: r.str(c, 'name'),
    ad_format: r.str(c, 'ad_format'),
    advertiser_id: r.int(c, 'advertiser_id'),
    conversion_tracker_id: r.int(c, 'conversion_tracker_id'),
    folder_id: r.int(c, 'folder_id'),
    account_id_created: r.int(c, 'account_id_created'),
    account_id_modified: r.int(c, 'account_id_modified'),
    created: r.time(c, 'created'),
    modified: r.time(c, 'modified'),
    is_active: r.bool(c, 'is_active'),
    is_archived: r.bool(c, 'is_archived'),
    notes: r.str(c, 'notes'),
    tier: r.int(c, 'tier', 'tier', SMALLINT),
    weight: r.int(c, 'weight', 'weight', SMALLINT),
    delivery_start: r.time(delivery, 'start', 'delivery.start'),
    delivery_end: r.time(delivery, 'end', 'delivery.end'),
    event_ad_requests: event('ad_requests'),
    event_clicks: event('clicks'),
    event_filled_impressions: event('filled_impressions'),
    event_impressions: event('impressions'),
    event_measurable_impressions: event('measurable_impressions'),
    event_viewable_impressions: event('viewable_impressions'),
    pricing_model: r.str(pricing, 'model', 'pricing.model'),
    pricing_value: r.num(pricing, 'value', 'pricing.value'),
    pacing_event: r.str(pacing, 'event', 'pacing.event'),
    pacing_period: r.str(pacing, 'period', 'pacing.period'),
    pacing_speed: normalizeSpeed(r.str(pacing, 'speed', 'pacing.speed')),
    pacing_value: r.int(pacing, 'value', 'pacing.value'),
    targeting: r.jsonOrUnset(c, 'targeting'),
    raw: c,
  };
  // creative_ids is only checked: the creatives table is filled from the creative listings.
  r.intList(c, 'creative_ids');
  const zoneIds = [...new Set(r.intList(c, 'zone_ids'))];
  return { row, zoneIds };
}

/** The spec's parameter list spells pacing speed `spead`, its examples `spread`: store one. */
export function normalizeSpeed(speed: string | null): string | null {
  return speed === 'spead' ? 'spread' : speed;
}

const EMPTY: JsonObject = {};

/** A creative as its typed row, under the campaign it was listed under; undefined if its id is unreadable. */
export function mapCreative(
  creative: unknown,
  listedUnder: number,
  problems: ProblemSink,
): CreativeRow | undefined {
  const id = readId('creative', creative, 'creative_id', problems);
  if (id === undefined || !isObject(creative)) return undefined;
  const c = storableEntity('creative', id, creative, problems);
  const r = new FieldReader('creative', id, problems);
  const own = r.int(c, 'campaign_id');
  const under = `${listedUnder}, the campaign it was listed under`;
  if (own !== null && own !== listedUnder)
    problems.add(fieldProblem('creative', id, 'campaign_id', under, c.campaign_id));
  const delivery = r.objectOrUnset(c, 'delivery') ?? EMPTY;
  const thumbnail = r.objectOrUnset(c, 'thumbnail') ?? EMPTY;
  const data = r.objectOrUnset(c, 'data');
  const d = data ?? EMPTY;
  return {
    creative_id: id,
    campaign_id: listedUnder,
    name: r.str(c, 'name'),
    ad_type: r.str(c, 'ad_type'),
    is_active: r.bool(c, 'is_active'),
    account_id_created: r.int(c, 'account_id_created'),
    account_id_modified: r.int(c, 'account_id_modified'),
    created: r.time(c, 'created'),
    modified: r.time(c, 'modified'),
    weight: r.int(c, 'weight', 'weight', INTEGER),
    delivery_start: r.time(delivery, 'start', 'delivery.start'),
    delivery_end: r.time(delivery, 'end', 'delivery.end'),
    thumbnail_color: r.str(thumbnail, 'average_color', 'thumbnail.average_color'),
    thumbnail_filehash: r.str(thumbnail, 'filehash', 'thumbnail.filehash'),
    data_width: r.int(d, 'width', 'data.width', INTEGER),
    data_height: r.int(d, 'height', 'data.height', INTEGER),
    data_filehash: r.str(d, 'filehash', 'data.filehash'),
    data_landing_page: r.str(d, 'landing_page', 'data.landing_page'),
    data,
    targeting: r.jsonOrUnset(c, 'targeting'),
    raw: c,
  };
}

/** What the API returned: every campaign, and the creatives listed under each campaign id. */
export interface RawCatalogue {
  readonly campaigns: readonly unknown[];
  readonly creativesByCampaign: ReadonlyMap<number, readonly unknown[]>;
}

/** Maps a whole read. Offset paging can show an entity twice: the last copy wins (one upsert per row). */
export function buildCatalogue(raw: RawCatalogue, problems: ProblemSink): Catalogue {
  const campaigns = new Map<number, MappedCampaign>();
  for (const c of raw.campaigns) {
    const mapped = mapCampaign(c, problems);
    if (mapped !== undefined) campaigns.set(mapped.row.campaign_id, mapped);
  }
  const creatives = new Map<number, CreativeRow>();
  for (const [campaignId, list] of raw.creativesByCampaign) {
    // A listing of a campaign deleted between the two reads is dropped: its creatives read as deleted.
    if (!campaigns.has(campaignId)) continue;
    for (const item of list) {
      const row = mapCreative(item, campaignId, problems);
      if (row !== undefined) creatives.set(row.creative_id, row);
    }
  }
  return { campaigns: [...campaigns.values()], creatives: [...creatives.values()] };
}
