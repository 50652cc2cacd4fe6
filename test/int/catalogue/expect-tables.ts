// Reads the catalogue through the real API client and checks the warehouse tables against it,
// field by field. The expectations are written out here from the spec, independently of the
// mapping code under test, so a mapping bug cannot hide behind itself.
import type pg from 'pg';
import { expect } from 'vitest';
import type { ApiClient } from '../../../src/api/client.js';
import type { Campaign, Creative } from '../../helpers/api-client.js';

type Obj = Record<string, unknown>;

/** Every campaign and, by campaign id, its creatives, as the API returns them now. */
export async function readApi(api: ApiClient): Promise<{ campaigns: Campaign[]; creatives: Creative[] }> {
  const campaigns: Campaign[] = [];
  for await (const page of api.campaigns(5)) campaigns.push(...page);
  const creatives: Creative[] = [];
  for (const c of campaigns)
    for await (const page of api.creatives(c.campaign_id, 5)) creatives.push(...page);
  return { campaigns, creatives };
}

const big = (v: unknown) => (v === undefined || v === null ? null : String(v));
const opt = (v: unknown) => (v === undefined ? null : v);
const time = (v: unknown) =>
  v === undefined || v === null || v === 0 ? null : new Date((v as number) * 1000);
/** An object field that reads as [] when unset. */
const obj = (v: unknown): Obj => (Array.isArray(v) || v === undefined || v === null ? {} : (v as Obj));
const jsonOrNull = (v: unknown) => (Array.isArray(v) && v.length === 0 ? null : opt(v));

function expectedCampaign(c: Campaign): Obj {
  const delivery = obj(c.delivery);
  const events = obj(c.event_counts);
  const pricing = obj(c.pricing);
  const pacing = obj(c.pacing);
  return {
    campaign_id: String(c.campaign_id),
    name: opt(c.name),
    ad_format: opt(c.ad_format),
    advertiser_id: big(c.advertiser_id),
    conversion_tracker_id: big(c.conversion_tracker_id),
    folder_id: big(c.folder_id),
    account_id_created: big(c.account_id_created),
    account_id_modified: big(c.account_id_modified),
    created: time(c.created),
    modified: time(c.modified),
    is_active: opt(c.is_active),
    is_archived: opt(c.is_archived),
    notes: opt(c.notes),
    tier: opt(c.tier),
    weight: opt(c.weight),
    delivery_start: time(delivery.start),
    delivery_end: time(delivery.end),
    event_ad_requests: big(events.ad_requests),
    event_clicks: big(events.clicks),
    event_filled_impressions: big(events.filled_impressions),
    event_impressions: big(events.impressions),
    event_measurable_impressions: big(events.measurable_impressions),
    event_viewable_impressions: big(events.viewable_impressions),
    pricing_model: opt(pricing.model),
    pricing_value: big(pricing.value),
    pacing_event: opt(pacing.event),
    pacing_period: opt(pacing.period),
    pacing_speed: pacing.speed === 'spead' ? 'spread' : opt(pacing.speed),
    pacing_value: big(pacing.value),
    targeting: jsonOrNull(c.targeting),
    raw: c,
    deleted_at: null,
  };
}

function expectedCreative(k: Creative): Obj {
  const delivery = obj(k.delivery);
  const thumbnail = obj(k.thumbnail);
  const data = obj(k.data);
  return {
    creative_id: String(k.creative_id),
    campaign_id: big(k.campaign_id),
    name: opt(k.name),
    ad_type: opt(k.ad_type),
    is_active: opt(k.is_active),
    account_id_created: big(k.account_id_created),
    account_id_modified: big(k.account_id_modified),
    created: time(k.created),
    modified: time(k.modified),
    weight: opt(k.weight),
    delivery_start: time(delivery.start),
    delivery_end: time(delivery.end),
    thumbnail_color: opt(thumbnail.average_color),
    thumbnail_filehash: opt(thumbnail.filehash),
    data_width: opt(data.width),
    data_height: opt(data.height),
    data_filehash: opt(data.filehash),
    data_landing_page: opt(data.landing_page),
    data: jsonOrNull(k.data),
    targeting: jsonOrNull(k.targeting),
    raw: k,
    deleted_at: null,
  };
}

/**
 * Asserts that the live rows of campaigns, creatives and campaign_zones are exactly what the API
 * returns, column by column. Returns the API's view for further checks.
 */
export async function expectTablesMatchApi(
  pool: pg.Pool,
  schema: string,
  api: ApiClient,
): Promise<{ campaigns: Campaign[]; creatives: Creative[] }> {
  const now = await readApi(api);
  const { rows: campaigns } = await pool.query<Obj>(
    `SELECT * FROM ${schema}.campaigns WHERE deleted_at IS NULL ORDER BY campaign_id`,
  );
  const apiCampaigns = [...now.campaigns].sort((a, b) => a.campaign_id - b.campaign_id);
  expect(campaigns.map((r) => r.campaign_id)).toEqual(apiCampaigns.map((c) => String(c.campaign_id)));
  campaigns.forEach((row, i) => {
    const { synced_at, account, ...rest } = row;
    expect(synced_at).toBeInstanceOf(Date);
    expect(account).toBe('default');
    expect(rest, `campaign ${String(row.campaign_id)}`).toEqual(
      expectedCampaign(apiCampaigns[i] as Campaign),
    );
  });

  const { rows: zones } = await pool.query<{ campaign_id: string; zones: string[] }>(
    `SELECT z.campaign_id, array_agg(z.zone_id::text ORDER BY z.zone_id) AS zones
       FROM ${schema}.campaign_zones z JOIN ${schema}.campaigns c USING (campaign_id)
      WHERE c.deleted_at IS NULL GROUP BY z.campaign_id ORDER BY z.campaign_id`,
  );
  const apiZones = apiCampaigns
    .filter((c) => (c.zone_ids ?? []).length > 0)
    .map((c) => ({
      campaign_id: String(c.campaign_id),
      zones: [...new Set(c.zone_ids)].sort((a, b) => a - b).map(String),
    }));
  expect(zones).toEqual(apiZones);

  const { rows: creatives } = await pool.query<Obj>(
    `SELECT * FROM ${schema}.creatives WHERE deleted_at IS NULL ORDER BY creative_id`,
  );
  const apiCreatives = [...now.creatives].sort((a, b) => a.creative_id - b.creative_id);
  expect(creatives.map((r) => r.creative_id)).toEqual(apiCreatives.map((k) => String(k.creative_id)));
  creatives.forEach((row, i) => {
    const { synced_at, account, ...rest } = row;
    expect(synced_at).toBeInstanceOf(Date);
    expect(account).toBe('default');
    expect(rest, `creative ${String(row.creative_id)}`).toEqual(
      expectedCreative(apiCreatives[i] as Creative),
    );
  });
  return now;
}

/** Everything in the three tables, for before/after comparisons. */
export async function snapshot(pool: pg.Pool, schema: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [table, key] of [
    ['campaigns', 'campaign_id'],
    ['creatives', 'creative_id'],
    ['campaign_zones', 'campaign_id, zone_id'],
  ] as const) {
    const { rows } = await pool.query(`SELECT * FROM ${schema}.${table} ORDER BY ${key}`);
    out.push(rows);
  }
  return out;
}

/**
 * Every row of the catalogue tables but the columns that keep the API's own encoding (jsonb) and
 * the sync time: what two syncs of the same catalogue must agree on, whatever encoding it came in.
 */
export async function typedTables(pool: pg.Pool, schema: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [table, key] of [
    ['campaigns', 'campaign_id'],
    ['creatives', 'creative_id'],
  ] as const) {
    const { rows } = await pool.query<Obj>(`SELECT * FROM ${schema}.${table} ORDER BY ${key}`);
    out.push(
      rows.map(({ raw: _r, data: _d, targeting: _t, synced_at: _s, deleted_at, ...typed }) => ({
        ...typed,
        deleted: deleted_at !== null,
      })),
    );
  }
  const zones = await pool.query(`SELECT * FROM ${schema}.campaign_zones ORDER BY 1, 2`);
  return [...out, zones.rows];
}
