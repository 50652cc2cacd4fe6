/** The resources the emulator serves, shaped exactly as the spec's reads return them. */

export const AD_FORMATS = ['display', 'native', 'vast', 'redirect'] as const;
export type AdFormat = (typeof AD_FORMATS)[number];

/** Allowed creative ad_type values per campaign ad_format (spec: "Ad types by campaign ad format"). */
export const AD_TYPES: Readonly<Record<AdFormat, readonly string[]>> = {
  display: ['image', 'code', 'video', 'zip', 'external'],
  native: ['json'],
  vast: ['video', 'url', 'wrapper'],
  redirect: ['url'],
};

export interface Delivery {
  start: number;
  end: number;
}

export interface EventCounts {
  ad_requests: number;
  clicks: number;
  filled_impressions: number;
  impressions: number;
  measurable_impressions: number;
  viewable_impressions: number;
}

export interface Pricing {
  model: 'CPM' | 'CPC';
  value: number;
}

export interface Pacing {
  event: string;
  period: string;
  speed: string;
  value: number;
}

/** The spec's quirk: an unset object field reads as an empty JSON array. */
export type OrEmpty<T> = T | [];

export interface Campaign {
  campaign_id: number;
  name: string;
  ad_format: AdFormat;
  advertiser_id: number;
  conversion_tracker_id: number;
  folder_id: number;
  account_id_created: number;
  account_id_modified: number;
  created: number;
  modified: number;
  is_active: boolean;
  is_archived: boolean;
  notes: string;
  tier: number;
  weight: number;
  zone_ids: number[];
  creative_ids: number[];
  delivery: Delivery;
  event_counts: EventCounts;
  pricing: OrEmpty<Pricing>;
  pacing: OrEmpty<Pacing>;
  targeting: OrEmpty<Record<string, unknown>>;
  creative_optimization: unknown[];
  metadata: unknown[];
  watchlist: unknown[];
}

export interface Creative {
  creative_id: number;
  campaign_id: number;
  name: string;
  ad_type: string;
  is_active: boolean;
  account_id_created: number;
  account_id_modified: number;
  created: number;
  modified: number;
  weight: number;
  data: Record<string, unknown>;
  delivery: Delivery;
  targeting: OrEmpty<Record<string, unknown>>;
  event_counts: unknown[];
  metadata: unknown[];
  thumbnail: { average_color: string; filehash: string };
}

/** A zone (inventory): not served by any endpoint (the spec names zones only), but referenced by campaigns and reports. */
export interface Zone {
  zone_id: number;
  domain: string;
}

/** The account id the seeded catalogue was "created in the UI" with; API writes use the key's account. */
export const UI_ACCOUNT_ID = 100000001;
/** Default account id of API keys: differs from UI_ACCOUNT_ID so a write visibly changes account_id_modified. */
export const API_ACCOUNT_ID = 100000002;

/** The ad_size dimension value of a creative: 'WxH' from its data, '0x0' when it has no size. */
export function adSizeOf(creative: Creative): string {
  const { width, height } = creative.data;
  return typeof width === 'number' && typeof height === 'number' ? `${width}x${height}` : '0x0';
}

/** The landing_url dimension value of a creative: data.landing_page, or '' when it has none. */
export function landingUrlOf(creative: Creative): string {
  const page = creative.data.landing_page;
  return typeof page === 'string' ? page : '';
}
