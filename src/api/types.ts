// TypeScript shapes of the spec's resources. Reads are permissive: the API may add fields, and
// the spec leaves several shapes open (targeting, metadata), so unknown fields pass through.

/** Delivery window: UNIX seconds; start 0 = start immediately, end 0 = no end. */
export interface Delivery {
  start: number;
  end?: number;
}

export interface Pricing {
  model: 'CPM' | 'CPC' | (string & {});
  value: number;
}

export interface Pacing {
  event: 'impressions' | 'clicks' | 'conversions' | (string & {});
  period: 'due_date' | 'day' | (string & {});
  /** The spec writes `spead`; the vendor means `spread`. Both are accepted. */
  speed: 'spread' | 'spead' | 'asap' | (string & {});
  value: number;
}

export type AdFormat = 'display' | 'native' | 'vast' | 'redirect';

/** A campaign as returned by reads. */
export interface Campaign {
  campaign_id: number;
  name?: string;
  ad_format?: AdFormat | (string & {});
  advertiser_id?: number;
  conversion_tracker_id?: number;
  folder_id?: number;
  account_id_created?: number;
  account_id_modified?: number;
  created?: number;
  modified?: number;
  is_active?: boolean;
  is_archived?: boolean;
  notes?: string;
  tier?: number;
  weight?: number;
  zone_ids?: number[];
  creative_ids?: number[];
  delivery?: Delivery;
  event_counts?: Record<string, number>;
  /** An object, or an empty array when unset. */
  pricing?: Pricing | unknown[];
  pacing?: Pacing | unknown[];
  targeting?: unknown;
  creative_optimization?: unknown[];
  metadata?: unknown[];
  watchlist?: unknown[];
  [field: string]: unknown;
}

/** A creative as returned by reads. */
export interface Creative {
  creative_id: number;
  campaign_id?: number;
  name?: string;
  ad_type?: string;
  is_active?: boolean;
  account_id_created?: number;
  account_id_modified?: number;
  created?: number;
  modified?: number;
  weight?: number;
  data?: CreativeData;
  delivery?: Delivery;
  targeting?: unknown;
  event_counts?: unknown;
  metadata?: unknown[];
  thumbnail?: { average_color?: string; filehash?: string };
  [field: string]: unknown;
}

export interface CreativeData {
  filehash?: string;
  width?: number;
  height?: number;
  alt_text?: string;
  target_window?: '_blank' | '_top' | '_self' | '_parent' | (string & {});
  use_iframe?: boolean;
  landing_page?: string;
  ad_verification_code?: string;
  [field: string]: unknown;
}

/** POST /campaigns body. */
export interface NewCampaign {
  name: string;
  folder_id: number;
  ad_format: AdFormat;
  [field: string]: unknown;
}

/** PUT /campaigns/{id} body (a full replacement of the writable fields). */
export interface CampaignUpdate {
  name: string;
  is_active: boolean;
  folder_id: number;
  tier: number;
  weight: number;
  zone_ids: number[];
  conversion_tracker_id?: number;
  advertiser_id?: number;
  delivery?: Delivery;
  pricing?: Pricing;
  pacing?: Pacing;
  [field: string]: unknown;
}

/** POST /campaigns/{id}/creatives body. */
export interface NewCreative {
  name: string;
  ad_type: string;
  [field: string]: unknown;
}

export interface CreativeTargeting {
  devices?: Array<'desktop' | 'tablet' | 'mobile'>;
  geo?: { type: 'include' | 'exclude'; locations: { countries?: string[] } };
  languages?: { type: 'include' | 'exclude'; items: string[] };
  keywords?: string[][];
  keyvalues?: Array<Array<{ key: string; operator: string; value: string }>>;
}

/** PUT /campaigns/{cid}/creatives/{id} body. */
export interface CreativeUpdate {
  name: string;
  is_active: boolean;
  data: CreativeData;
  delivery?: Delivery;
  targeting?: CreativeTargeting;
  [field: string]: unknown;
}

/** A list page request: limit (API default 100) and offset (items skipped). */
export interface PageRequest {
  limit?: number;
  offset?: number;
}
