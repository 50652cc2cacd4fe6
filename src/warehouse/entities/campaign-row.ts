import { FieldReader, SMALLINT, readId, type JsonObject } from './fields.js';

/** One row of `campaigns`, keyed by column name (see CAMPAIGN_COLUMNS); times are ISO instants. */
export interface CampaignRow {
  readonly campaign_id: number;
  readonly name: string | null;
  readonly ad_format: string | null;
  readonly advertiser_id: number | null;
  readonly conversion_tracker_id: number | null;
  readonly folder_id: number | null;
  readonly account_id_created: number | null;
  readonly account_id_modified: number | null;
  readonly created: string | null;
  readonly modified: string | null;
  readonly is_active: boolean | null;
  readonly is_archived: boolean | null;
  readonly notes: string | null;
  readonly tier: number | null;
  readonly weight: number | null;
  readonly delivery_start: string | null;
  readonly delivery_end: string | null;
  readonly event_ad_requests: number | null;
  readonly event_clicks: number | null;
  readonly event_filled_impressions: number | null;
  readonly event_impressions: number | null;
  readonly event_measurable_impressions: number | null;
  readonly event_viewable_impressions: number | null;
  readonly pricing_model: string | null;
  readonly pricing_value: number | null;
  readonly pacing_event: string | null;
  readonly pacing_period: string | null;
  readonly pacing_speed: string | null;
  readonly pacing_value: number | null;
  readonly targeting: JsonObject | unknown[] | null;
  readonly raw: JsonObject;
}

/** A campaign mapped for the warehouse: its row and its zone assignments. */
export interface MappedCampaign {
  readonly row: CampaignRow;
  readonly zoneIds: readonly number[];
}

const EMPTY: JsonObject = {};

/**
 * Maps a campaign as returned by the API to its typed row. Unknown fields stay in `raw`; a known
 * field of the wrong type throws EntityFieldError naming the campaign id and the field.
 */
export function mapCampaign(campaign: unknown): MappedCampaign {
  const id = readId('campaign', campaign, 'campaign_id');
  const c = campaign as JsonObject;
  const r = new FieldReader('campaign', id);
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
