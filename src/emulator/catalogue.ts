// The resources as the spec's reads shape them, and the seeded catalogue every report cell refers to.
import { createRng, mixSeed, type Rng } from './prng.js';

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

function eventCounts(impressions: number) {
  return {
    ad_requests: impressions * 2,
    clicks: Math.floor(impressions / 200),
    filled_impressions: Math.floor(impressions * 1.2),
    impressions,
    measurable_impressions: Math.floor(impressions * 0.9),
    viewable_impressions: Math.floor(impressions * 0.6),
  };
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
type OrEmpty<T> = T | [];

export interface WriteStamp {
  readonly at: number;
  readonly accountId: number;
}

const none = <T>(): T[] => [];
const unset = <T>(): OrEmpty<T> => [];
const record = (): Record<string, unknown> => ({});

/** A campaign as POST /campaigns makes it; its shape is every campaign's (seeded ones fill in more). */
export function newCampaign(
  id: number,
  input: { name: string; ad_format: AdFormat; folder_id: number },
  stamp: WriteStamp,
) {
  return {
    campaign_id: id,
    name: input.name,
    ad_format: input.ad_format,
    advertiser_id: 0,
    conversion_tracker_id: 0,
    folder_id: input.folder_id,
    account_id_created: stamp.accountId,
    account_id_modified: stamp.accountId,
    created: stamp.at,
    modified: stamp.at,
    is_active: false,
    is_archived: false,
    notes: '',
    tier: 5,
    weight: 50,
    zone_ids: none<number>(),
    creative_ids: none<number>(),
    delivery: { start: 0, end: 0 },
    event_counts: eventCounts(0),
    pricing: unset<Pricing>(),
    pacing: unset<Pacing>(),
    targeting: unset<Record<string, unknown>>(),
    creative_optimization: none<unknown>(),
    metadata: none<unknown>(),
    watchlist: none<unknown>(),
  };
}
export type Campaign = ReturnType<typeof newCampaign>;

export function newCreative(
  id: number,
  campaignId: number,
  input: { name: string; ad_type: string },
  stamp: WriteStamp,
) {
  return {
    creative_id: id,
    campaign_id: campaignId,
    name: input.name,
    ad_type: input.ad_type,
    is_active: false,
    account_id_created: stamp.accountId,
    account_id_modified: stamp.accountId,
    created: stamp.at,
    modified: stamp.at,
    weight: 50,
    data: record(),
    delivery: { start: 0, end: 0 },
    targeting: unset<Record<string, unknown>>(),
    event_counts: none<unknown>(),
    metadata: none<unknown>(),
    thumbnail: { average_color: '#000000', filehash: '' },
  };
}
export type Creative = ReturnType<typeof newCreative>;

/** A zone (inventory): not served by any endpoint (the spec names zones only), but referenced by campaigns and reports. */
interface Zone {
  zone_id: number;
  domain: string;
}

/** The account id the seeded catalogue was "created in the UI" with; API writes use the key's account. */
const UI_ACCOUNT_ID = 100000001;
/** Default account id of API keys: differs from UI_ACCOUNT_ID so a write visibly changes account_id_modified. */
export const API_ACCOUNT_ID = 100000002;

export function adSizeOf(creative: Creative): string {
  const { width, height } = creative.data;
  return typeof width === 'number' && typeof height === 'number' ? `${width}x${height}` : '0x0';
}

export function landingUrlOf(creative: Creative): string {
  const page = creative.data.landing_page;
  return typeof page === 'string' ? page : '';
}

export interface Catalogue {
  readonly campaigns: readonly Campaign[];
  readonly creatives: readonly Creative[];
  readonly zones: readonly Zone[];
  /** Impressions a day in flight of each campaign with a goal, by campaign id (others: as the cells fall). */
  readonly daily: ReadonlyMap<number, number>;
}

/** The goals and flights of seeded campaigns with a goal, in turn: [event, period, speed, flight start and end in
 * days from the first day (null: open), and how delivery meets the goal] (docs/emulator.md, Pacing). */
const PLANS: ReadonlyArray<readonly [string, string, string, number | null, number | null, number]> = [
  ['impressions', 'due_date', 'spread', -7, 23, 1.12], // on pace (delivers 1.12 times the goal's need)
  ['impressions', 'due_date', 'spread', -5, 10, 0.5], // behind: under-delivers
  ['impressions', 'due_date', 'spread', -4, 26, 1.8], // ahead
  ['impressions', 'due_date', 'asap', -3, 12, 15], // asap: the goal is 15 days of delivery, all due at once
  ['impressions', 'day', 'spread', null, null, 1.12], // a day goal, open flight
  ['impressions', 'due_date', 'spread', -20, -2, 1], // ended
  ['impressions', 'due_date', 'spread', 2, 30, 1], // not started
  ['impressions', 'due_date', 'spread', -6, null, 1], // no end
  ['impressions', 'day', 'asap', -6, 20, 1.3], // a day goal, asap
  ['conversions', 'due_date', 'spread', -6, 24, 1], // nothing counts conversions: no data
  ['clicks', 'due_date', 'spread', -6, 24, 0.5], // clicks: the goal is twice the lifetime counter
];

/** Gives `campaign` the `k`th plan around `first` (UNIX seconds of a midnight); returns its impressions a day. */
function planCampaign(campaign: Campaign, k: number, first: number): number {
  const [event, period, speed, start, end, factor] = PLANS[k % PLANS.length] ?? PLANS[0]!;
  const daily = 20_000 + 5_000 * (k % 7);
  const days = start === null || end === null ? 30 : end - start;
  campaign.delivery = {
    start: start === null ? 0 : first + start * 86400,
    end: end === null ? 0 : first + end * 86400,
  };
  const value =
    event === 'clicks'
      ? campaign.event_counts.clicks / factor
      : period === 'day'
        ? daily / factor
        : speed === 'asap'
          ? daily * factor
          : (daily * days) / factor;
  campaign.pacing = { event, period, speed, value: Math.round(value) };
  return daily;
}

export interface CatalogueSize {
  campaigns?: number;
  creativesPerCampaign?: number;
  zones?: number;
}

/** Generates the catalogue for a seed: same seed, sizes and first day (UNIX seconds of the midnight its flights
 * are placed around), same catalogue, byte for byte. */
export function generateCatalogue(seed: number, size: CatalogueSize = {}, first = EPOCH): Catalogue {
  const rng = createRng(mixSeed(seed, 0xca7a));
  const ids = uniqueIds(rng);
  const zones: Zone[] = [];
  for (let z = 0; z < (size.zones ?? 50); z++) zones.push({ zone_id: ids(), domain: rng.pick(DOMAINS) });
  zones.sort((a, b) => a.zone_id - b.zone_id);
  const campaigns: Campaign[] = [];
  const creatives: Creative[] = [];
  const campaignCount = size.campaigns ?? 20;
  const daily = new Map<number, number>();
  for (let c = 0; c < campaignCount; c++) {
    // Cycle the formats so every seed has a mix of all four.
    const format = AD_FORMATS[c % AD_FORMATS.length] ?? 'display';
    const campaign = seedCampaign(rng, ids(), c, format, zones, first);
    if (!Array.isArray(campaign.pacing))
      daily.set(campaign.campaign_id, planCampaign(campaign, daily.size, first));
    const count = size.creativesPerCampaign ?? rng.int(3, 8);
    for (let k = 0; k < count; k++) {
      const creative = seedCreative(rng, ids(), campaign, k);
      campaign.creative_ids.push(creative.creative_id);
      creatives.push(creative);
    }
    campaigns.push(campaign);
  }
  return { campaigns, creatives, zones, daily };
}

export function uniqueIds(rng: Rng, taken: Set<number> = new Set()): () => number {
  return () => {
    for (;;) {
      const id = rng.int(100_000_000, 999_999_999);
      if (!taken.has(id)) {
        taken.add(id);
        return id;
      }
    }
  };
}

function seedCampaign(
  rng: Rng,
  id: number,
  index: number,
  format: AdFormat,
  zones: readonly Zone[],
  first: number,
): Campaign {
  const created = EPOCH - rng.int(30, 400) * 86400 + rng.int(0, 86399);
  const zoneCount = Math.min(zones.length, rng.int(15, 35));
  const zoneIds = sample(rng, zones, zoneCount)
    .map((z) => z.zone_id)
    .sort((a, b) => a - b);
  const impressions = rng.int(10_000, 5_000_000);
  return {
    campaign_id: id,
    name: `${rng.pick(NAME_WORDS)} ${format} #${index + 1}`,
    ad_format: format,
    advertiser_id: rng.int(100_000_000, 999_999_999),
    conversion_tracker_id: rng.chance(0.5) ? rng.int(100_000_000, 999_999_999) : 0,
    folder_id: rng.int(100_000_000, 999_999_999),
    account_id_created: UI_ACCOUNT_ID,
    account_id_modified: UI_ACCOUNT_ID,
    created,
    modified: created + rng.int(0, 20) * 86400,
    is_active: rng.chance(0.8),
    is_archived: rng.chance(0.1),
    notes: rng.chance(0.5) ? '' : 'Seeded by the emulator; "notes" may hold, commas.',
    tier: rng.int(1, 10),
    weight: rng.int(1, 100),
    zone_ids: zoneIds,
    creative_ids: [],
    // Whole days (reports have no finer flight), around the first day; a campaign with a goal gets a plan's.
    delivery: {
      start: rng.chance(0.5) ? 0 : Math.ceil(created / 86400) * 86400,
      end: rng.chance(0.7) ? 0 : first + rng.int(30, 300) * 86400,
    },
    event_counts: eventCounts(impressions),
    // Every third campaign leaves pricing, pacing and targeting unset: they read back as [].
    pricing:
      index % 3 === 0 ? [] : { model: rng.pick(['CPM', 'CPC'] as const), value: rng.int(10, 900) / 100 },
    pacing:
      index % 3 === 0
        ? []
        : {
            event: 'impressions',
            period: rng.pick(['day', 'due_date']),
            speed: rng.pick(['spread', 'asap']),
            value: rng.int(1000, 100000),
          },
    targeting:
      index % 3 === 0
        ? []
        : {
            devices: ['desktop', 'mobile'],
            geo: { type: 'include', locations: { countries: ['US', 'GB', 'DE'] } },
          },
    creative_optimization: [],
    metadata: [],
    watchlist: [],
  };
}

function seedCreative(rng: Rng, id: number, campaign: Campaign, index: number): Creative {
  const adType = rng.pick(AD_TYPES[campaign.ad_format]);
  const created = campaign.created + rng.int(0, 10) * 86400;
  const filehash = `${id.toString(36)}_${rng.int(0, 0xffffff).toString(16)}`;
  return {
    creative_id: id,
    campaign_id: campaign.campaign_id,
    name: `${campaign.name} / creative ${index + 1}`,
    ad_type: adType,
    is_active: rng.chance(0.85),
    account_id_created: UI_ACCOUNT_ID,
    account_id_modified: UI_ACCOUNT_ID,
    created,
    modified: created,
    weight: rng.int(1, 100),
    data: seedData(rng, adType, filehash),
    delivery: { start: 0, end: 0 },
    targeting: index % 4 === 3 ? { devices: ['mobile'], languages: { type: 'include', items: ['en'] } } : [],
    event_counts: [],
    metadata: [],
    thumbnail: {
      average_color: `#${rng.int(0, 0xffffff).toString(16).padStart(6, '0')}`,
      filehash: `${filehash}_thumb.jpg`,
    },
  };
}

function seedData(rng: Rng, adType: string, filehash: string): Record<string, unknown> {
  const landing_page = rng.pick(LANDING_PAGES);
  if (adType === 'json') return { title: 'Native "headline"', description: 'Body, text', landing_page };
  if (adType === 'url' || adType === 'wrapper')
    return { url: `https://vast.example.com/${filehash}.xml`, landing_page };
  const [width = 0, height = 0] = rng.pick(adType === 'video' ? VIDEO_SIZES : DISPLAY_SIZES);
  return {
    filehash: `${filehash}.${adType === 'video' ? 'mp4' : adType === 'zip' ? 'zip' : 'png'}`,
    width,
    height,
    alt_text: 'An ad',
    target_window: rng.pick(TARGET_WINDOWS),
    use_iframe: rng.chance(0.5),
    landing_page,
  };
}

function sample<T>(rng: Rng, items: readonly T[], count: number): T[] {
  const pool = [...items];
  return Array.from({ length: Math.min(count, pool.length) }).flatMap(() =>
    pool.splice(rng.int(0, pool.length - 1), 1),
  );
}

/** 2025-01-01T00:00:00Z: seeded timestamps sit before it, so they never depend on the real clock. */
const EPOCH = 1735689600;
const sizes = (text: string) => text.split(' ').map((s) => s.split('x').map(Number));
const DISPLAY_SIZES = sizes('300x250 728x90 160x600 320x50 300x600 970x250');
const VIDEO_SIZES = sizes('1920x1080 1280x720 640x360');
/** Landing pages, two of them with characters that CSV, COPY and JSON writers must escape. */
const LANDING_PAGES: readonly string[] = [
  'https://shop.example.com/sale?utm_source=adops',
  'https://brand.example.org/spring',
  'https://shop.example.com/sale?tags="spring",summer',
  "https://example.fr/l'offre-du-jour",
  'https://travel.example.net/deals/über',
  'https://app.example.io/install?ref=display&v=2',
];
const NAME_WORDS = ['Spring', 'Summer "Sale"', 'Brand, EU', "Kids' Toys", 'Retargeting', 'Ünïcode'];
export const TARGET_WINDOWS: readonly string[] = ['_blank', '_top', '_self', '_parent'];
const DOMAINS = (
  'news.example.com sports.example.com weather.example.org recipes.example.net games.example.io ' +
  'travel.example.co.uk tech.example.de finance.example.fr auto.example.it music.example.es ' +
  'video.example.com forum.example.net blog.example.org shop.example.com mail.example.com xn--bcher-kva.example'
).split(' ');
