import type { ProblemSink } from './field-problem.js';
import { FieldReader, SMALLINT, readId, storableEntity } from './fields.js';
import type { CampaignRow, JsonObject, MappedCampaign } from '../warehouse/catalogue/rows.js';

const EMPTY: JsonObject = {};

/**
 * Maps a campaign as returned by the API to its typed row. Unknown fields stay in `raw`; a known
 * field that cannot be read is NULL in its column and reported to `problems`. Returns undefined
 * (reported too) when the campaign id cannot be read: such a campaign cannot be stored. Text that
 * Postgres cannot hold is stored repaired, and reported (storableEntity).
 */
export function mapCampaign(campaign: unknown, problems: ProblemSink): MappedCampaign | undefined {
  const id = readId('campaign', campaign, 'campaign_id', problems);
  if (id === undefined) return undefined;
  const c = storableEntity('campaign', id, campaign as JsonObject, problems);
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
