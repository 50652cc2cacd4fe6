// The campaign and creative endpoints over a writable copy of the seeded catalogue, reads shaped by quirks.
import type { Campaign, Catalogue, Creative, WriteStamp } from '../catalogue.js';
import { newCampaign, newCreative, uniqueIds } from '../catalogue.js';
import { isRecord, type Quirks } from '../options.js';
import { createRng, mixSeed } from '../prng.js';
import { badRequest, NO_CONTENT, notFound, type Handler, type Reply, type RequestContext } from './http.js';
import type { CampaignCreate, CampaignUpdate, CreativeCreate, CreativeUpdate } from './inputs.js';
import {
  parseCampaignCreate,
  parseCampaignUpdate,
  parseCreativeCreate,
  parseCreativeUpdate,
} from './inputs.js';

/** The largest accepted `limit` under the strict quirk (the spec leaves it open; docs/emulator.md). */
const MAX_LIMIT = 1000;

function page<T>(items: readonly T[], { query, quirks }: RequestContext): { items: T[] } {
  const param = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    if (!/^\d+$/.test(raw)) throw badRequest(`${name} must be a whole number.`, name);
    const value = Number(raw);
    if (value < min || value > max) throw badRequest(`${name} must be from ${min} to ${max}.`, name);
    return value;
  };
  const limit = param('limit', 100, 1, quirks.strict ? MAX_LIMIT : undefined);
  const offset = param('offset', 0, 0);
  return { items: items.slice(offset, offset + limit) };
}

function pathId(raw: string | undefined, name: string): number {
  const value = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw badRequest(`${name} in the path must be a positive integer.`, name);
  return value;
}

function stamp(ctx: RequestContext): WriteStamp {
  return { at: Math.floor(ctx.now.getTime() / 1000), accountId: ctx.accountId };
}

function campaignOf(store: CatalogueStore, ctx: RequestContext, precheck?: () => unknown): Campaign {
  const id = pathId(ctx.ids[0], 'campaign_id');
  return store.campaigns.get(id) ?? missing(ctx, `Campaign ${id} does not exist.`, precheck);
}

function creativeOf(
  store: CatalogueStore,
  ctx: RequestContext,
  campaign: Campaign,
  precheck?: () => unknown,
): Creative {
  const id = pathId(ctx.ids[1], 'creative_id');
  const message = `Creative ${id} does not exist in campaign ${campaign.campaign_id}.`;
  return store.getCreative(campaign.campaign_id, id) ?? missing(ctx, message, precheck);
}

/** A 404; the spec leaves 404-vs-400 order open: `precheck` (needs no entity) runs first unless strict. */
function missing(ctx: RequestContext, message: string, precheck?: () => unknown): never {
  if (!ctx.quirks.strict) precheck?.();
  throw notFound(message);
}

export function catalogueHandlers(catalogue: Catalogue, idSeed: number): Record<string, Handler> {
  const store = new CatalogueStore(catalogue, idSeed);
  const reply = (status: number, value: unknown, ctx: RequestContext): Reply => ({
    status,
    body: encodeEntities(value, ctx.quirks),
  });
  return {
    'GET /campaigns': (ctx) => reply(200, page(store.listCampaigns(), ctx), ctx),
    'POST /campaigns': (ctx) => {
      const id = store.createCampaign(parseCampaignCreate(ctx.body, ctx.quirks), stamp(ctx));
      return reply(201, { campaign_id: id }, ctx);
    },
    'GET /campaigns/:id': (ctx) => reply(200, campaignOf(store, ctx), ctx),
    'PUT /campaigns/:id': (ctx) => {
      const campaign = campaignOf(store, ctx, () => parseCampaignUpdate(ctx.body, ctx.quirks));
      store.updateCampaign(campaign, parseCampaignUpdate(ctx.body, ctx.quirks), stamp(ctx));
      return NO_CONTENT;
    },
    'DELETE /campaigns/:id': (ctx) => {
      store.deleteCampaign(campaignOf(store, ctx));
      return NO_CONTENT;
    },
    'GET /campaigns/:id/creatives': (ctx) => {
      const campaign = campaignOf(store, ctx, () => page([], ctx));
      return reply(200, page(store.listCreatives(campaign), ctx), ctx);
    },
    'POST /campaigns/:id/creatives': (ctx) => {
      const campaign = campaignOf(store, ctx, () => parseCreativeCreate(ctx.body, undefined, ctx.quirks));
      const input = parseCreativeCreate(ctx.body, campaign.ad_format, ctx.quirks);
      return reply(201, { creative_id: store.createCreative(campaign, input, stamp(ctx)) }, ctx);
    },
    'GET /campaigns/:id/creatives/:id': (ctx) =>
      reply(200, creativeOf(store, ctx, campaignOf(store, ctx)), ctx),
    'PUT /campaigns/:id/creatives/:id': (ctx) => {
      const precheck = () => parseCreativeUpdate(ctx.body, undefined, undefined, ctx.quirks);
      const campaign = campaignOf(store, ctx, precheck);
      const creative = creativeOf(store, ctx, campaign, precheck);
      const input = parseCreativeUpdate(ctx.body, campaign.ad_format, creative.ad_type, ctx.quirks);
      store.updateCreative(creative, input, stamp(ctx));
      return NO_CONTENT;
    },
    'DELETE /campaigns/:id/creatives/:id': (ctx) => {
      const campaign = campaignOf(store, ctx);
      const creative = creativeOf(store, ctx, campaign);
      store.deleteCreative(campaign, creative.creative_id, stamp(ctx));
      return NO_CONTENT;
    },
  };
}

export type EntityEncoding = Pick<Quirks, 'stringValues' | 'emptyAsArray' | 'sortKeys'>;

type BoolForm = 'digit' | 'word';

/** Entity JSON under the quirks; stringValues booleans are "1"/"0" or "true"/"false" by id parity. */
export function encodeEntities(value: unknown, q: EntityEncoding): string {
  if (!q.stringValues && !q.emptyAsArray && !q.sortKeys) return JSON.stringify(value);
  return JSON.stringify(transform(value, q, 'word', undefined));
}

function transform(value: unknown, q: EntityEncoding, form: BoolForm, key: string | undefined): unknown {
  if (typeof value === 'number') return q.stringValues ? String(value) : value;
  if (typeof value === 'boolean') {
    if (!q.stringValues) return value;
    return form === 'digit' ? (value ? '1' : '0') : String(value);
  }
  if (Array.isArray(value)) return value.map((v) => transform(v, q, form, undefined));
  if (!isRecord(value)) return value;
  if (q.emptyAsArray && isUnset(value, key)) return [];
  const own = boolFormOf(value) ?? form;
  const keys = Object.keys(value);
  if (q.sortKeys) keys.sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = transform(value[k], q, own, k);
  return out;
}

function boolFormOf(obj: Record<string, unknown>): BoolForm | undefined {
  const id = obj.creative_id ?? obj.campaign_id;
  return typeof id === 'number' ? (id % 2 === 1 ? 'digit' : 'word') : undefined;
}

/** An empty object, or a delivery window without bounds (start and end 0: what an unset one reads as). */
function isUnset(obj: Record<string, unknown>, key: string | undefined): boolean {
  const keys = Object.keys(obj);
  if (keys.length === 0) return true;
  return key === 'delivery' && keys.length === 2 && obj.start === 0 && obj.end === 0;
}

/** A writable deep copy: reports keep the seeded catalogue, so writes never change reports. Lists by id. */
class CatalogueStore {
  readonly campaigns = new Map<number, Campaign>();
  private readonly creatives = new Map<number, Creative>();
  private readonly nextId: () => number;

  constructor(seed: Catalogue, idSeed: number) {
    for (const c of seed.campaigns) this.campaigns.set(c.campaign_id, structuredClone(c));
    for (const c of seed.creatives) this.creatives.set(c.creative_id, structuredClone(c));
    const taken = new Set<number>([
      ...this.campaigns.keys(),
      ...this.creatives.keys(),
      ...seed.zones.map((z) => z.zone_id),
    ]);
    this.nextId = uniqueIds(createRng(mixSeed(idSeed, 0x1d5)), taken);
  }

  listCampaigns(): Campaign[] {
    return [...this.campaigns.values()].sort((a, b) => a.campaign_id - b.campaign_id);
  }

  createCampaign(input: CampaignCreate, stamp: WriteStamp): number {
    const id = this.nextId();
    this.campaigns.set(id, newCampaign(id, input, stamp));
    return id;
  }

  updateCampaign(c: Campaign, u: CampaignUpdate, stamp: WriteStamp): void {
    Object.assign(c, {
      name: u.name,
      is_active: u.is_active,
      folder_id: u.folder_id,
      tier: u.tier,
      weight: u.weight,
      zone_ids: [...u.zone_ids],
    });
    if (u.conversion_tracker_id !== undefined) c.conversion_tracker_id = u.conversion_tracker_id;
    if (u.advertiser_id !== undefined) c.advertiser_id = u.advertiser_id;
    if (u.delivery !== undefined) c.delivery = { ...u.delivery };
    if (u.pricing !== undefined) c.pricing = u.pricing === null ? [] : { ...u.pricing };
    if (u.pacing !== undefined) c.pacing = u.pacing === null ? [] : { ...u.pacing };
    this.touch(c, stamp);
  }

  /** Deletes a campaign and, with it, its creatives (the spec leaves this open). */
  deleteCampaign(c: Campaign): void {
    for (const creativeId of c.creative_ids) this.creatives.delete(creativeId);
    this.campaigns.delete(c.campaign_id);
  }

  listCreatives(c: Campaign): Creative[] {
    return c.creative_ids
      .map((id) => this.creatives.get(id))
      .filter((x): x is Creative => x !== undefined)
      .sort((a, b) => a.creative_id - b.creative_id);
  }

  /** A creative, only when it belongs to that campaign (one under another campaign is "not found"). */
  getCreative(campaignId: number, creativeId: number): Creative | undefined {
    const c = this.creatives.get(creativeId);
    return c?.campaign_id === campaignId ? c : undefined;
  }

  createCreative(campaign: Campaign, input: CreativeCreate, stamp: WriteStamp): number {
    const id = this.nextId();
    this.creatives.set(id, newCreative(id, campaign.campaign_id, input, stamp));
    campaign.creative_ids.push(id);
    this.touch(campaign, stamp);
    return id;
  }

  updateCreative(creative: Creative, u: CreativeUpdate, stamp: WriteStamp): void {
    creative.name = u.name;
    creative.is_active = u.is_active;
    creative.data = structuredClone(u.data);
    if (u.ad_type !== undefined) creative.ad_type = u.ad_type;
    if (u.weight !== undefined) creative.weight = u.weight;
    if (u.delivery !== undefined) creative.delivery = { ...u.delivery };
    if (u.targeting !== undefined)
      creative.targeting = u.targeting === null ? [] : structuredClone(u.targeting);
    if (typeof u.data.filehash === 'string' && u.data.filehash !== '')
      creative.thumbnail = { ...creative.thumbnail, filehash: `${u.data.filehash}_thumb.jpg` };
    this.touch(creative, stamp);
  }

  deleteCreative(campaign: Campaign, creativeId: number, stamp: WriteStamp): void {
    this.creatives.delete(creativeId);
    campaign.creative_ids = campaign.creative_ids.filter((id) => id !== creativeId);
    this.touch(campaign, stamp);
  }

  private touch(entity: Campaign | Creative, stamp: WriteStamp): void {
    entity.modified = stamp.at;
    entity.account_id_modified = stamp.accountId;
  }
}
