// Campaign and creative objects shaped like the spec's reads, for the mapping tests.

/** A campaign with every field set. */
export function fullCampaign(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    campaign_id: 862599431,
    name: 'Spring sale',
    ad_format: 'display',
    advertiser_id: 501,
    conversion_tracker_id: 77,
    folder_id: 12,
    account_id_created: 9001,
    account_id_modified: 9002,
    created: 1757664027,
    modified: 1757750427,
    is_active: true,
    is_archived: false,
    notes: 'tab\there, "quoted", back\\slash',
    tier: 3,
    weight: 40,
    zone_ids: [11, 12, 12],
    creative_ids: [210267475],
    delivery: { start: 1757664000, end: 1760256000 },
    event_counts: {
      ad_requests: 1000,
      clicks: 7,
      filled_impressions: 900,
      impressions: 880,
      measurable_impressions: 800,
      viewable_impressions: 600,
    },
    pricing: { model: 'CPM', value: 2.75 },
    pacing: { event: 'impressions', period: 'day', speed: 'spead', value: 10000 },
    targeting: { devices: ['mobile'] },
    creative_optimization: [],
    metadata: [],
    watchlist: [],
    ...overrides,
  };
}

/** A campaign as created with only the required fields: pricing, pacing and targeting unset. */
export function bareCampaign(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return fullCampaign({
    pricing: [],
    pacing: [],
    targeting: [],
    delivery: { start: 0, end: 0 },
    zone_ids: [],
    ...overrides,
  });
}

/** A video creative like the vendor's documented example. */
export function creative(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account_id_created: 9001,
    account_id_modified: 9001,
    ad_type: 'video',
    campaign_id: 862599431,
    created: 1757664027,
    modified: 1757664027,
    creative_id: 210267475,
    name: 'Hero video',
    is_active: true,
    weight: 1,
    data: {
      filehash: 'abcde_s8w826w9.mp4',
      height: 1080,
      landing_page: '',
      target_window: '_blank',
      use_iframe: true,
      width: 1920,
    },
    delivery: { start: 0, end: 1760256000 },
    targeting: [],
    event_counts: [],
    metadata: [],
    thumbnail: { average_color: '#a1b2c3', filehash: 'thumb_abcde.jpg' },
    ...overrides,
  };
}

/**
 * The same object as a PHP-style API sends it: every number as a string, booleans as "1"/"0",
 * nested objects and arrays included.
 */
export function stringEncoded<T>(value: T): T {
  const encode = (v: unknown): unknown => {
    if (typeof v === 'number') return String(v);
    if (typeof v === 'boolean') return v ? '1' : '0';
    if (Array.isArray(v)) return v.map(encode);
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
    return v;
  };
  return encode(value) as T;
}
