import type { Campaign, Creative } from '../entities.js';
import type { CatalogueStore, WriteStamp } from '../store.js';
import { parseCampaignCreate, parseCampaignUpdate } from './campaign-input.js';
import { parseCreativeCreate, parseCreativeUpdate } from './creative-input.js';
import { entityReply } from './entity-reply.js';
import { ApiError, notFound } from './errors.js';
import { NO_CONTENT, type Handler, type RequestContext } from './http.js';
import { page, pageParams, pathId } from './paging.js';

function stamp(ctx: RequestContext): WriteStamp {
  return { at: Math.floor(ctx.now.getTime() / 1000), accountId: ctx.accountId };
}

function campaignOf(store: CatalogueStore, ctx: RequestContext): Campaign {
  const id = pathId(ctx.ids[0], 'campaign_id');
  const campaign = store.getCampaign(id);
  if (campaign === undefined) throw notFound(`Campaign ${id} does not exist.`);
  return campaign;
}

function creativeOf(store: CatalogueStore, ctx: RequestContext, campaign: Campaign): Creative {
  const id = pathId(ctx.ids[1], 'creative_id');
  const creative = store.getCreative(campaign.campaign_id, id);
  if (creative === undefined)
    throw notFound(`Creative ${id} does not exist in campaign ${campaign.campaign_id}.`);
  return creative;
}

/**
 * Looks up what the path names, checking the request first unless the strict quirk is on: the spec
 * does not say whether an unknown id (404) or a bad request (400) is answered first, so by default
 * `precheck` (the validation that needs no entity) runs before the lookup, and under strict after it.
 */
function lookUp<T>(ctx: RequestContext, find: () => T, precheck: () => unknown): T {
  if (ctx.quirks.strict) return find();
  try {
    return find();
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) precheck();
    throw error;
  }
}

/** Handlers of the campaign and creative endpoints, keyed 'METHOD pattern'. */
export function catalogueHandlers(store: CatalogueStore): Record<string, Handler> {
  return {
    'GET /campaigns': (ctx) =>
      entityReply(200, page(store.listCampaigns(), pageParams(ctx.query, ctx.quirks.strict)), ctx.quirks),
    'POST /campaigns': (ctx) => {
      const id = store.createCampaign(parseCampaignCreate(ctx.body, ctx.quirks), stamp(ctx));
      return entityReply(201, { campaign_id: id }, ctx.quirks);
    },
    'GET /campaigns/:id': (ctx) => entityReply(200, campaignOf(store, ctx), ctx.quirks),
    'PUT /campaigns/:id': (ctx) => {
      const campaign = lookUp(
        ctx,
        () => campaignOf(store, ctx),
        () => parseCampaignUpdate(ctx.body, ctx.quirks),
      );
      store.updateCampaign(campaign.campaign_id, parseCampaignUpdate(ctx.body, ctx.quirks), stamp(ctx));
      return NO_CONTENT;
    },
    'DELETE /campaigns/:id': (ctx) => {
      store.deleteCampaign(campaignOf(store, ctx).campaign_id);
      return NO_CONTENT;
    },
    'GET /campaigns/:id/creatives': (ctx) => {
      const params = () => pageParams(ctx.query, ctx.quirks.strict);
      const campaign = lookUp(ctx, () => campaignOf(store, ctx), params);
      return entityReply(200, page(store.listCreatives(campaign.campaign_id) ?? [], params()), ctx.quirks);
    },
    'POST /campaigns/:id/creatives': (ctx) => {
      const campaign = lookUp(
        ctx,
        () => campaignOf(store, ctx),
        () => parseCreativeCreate(ctx.body, undefined, ctx.quirks),
      );
      const input = parseCreativeCreate(ctx.body, campaign.ad_format, ctx.quirks);
      return entityReply(201, { creative_id: store.createCreative(campaign, input, stamp(ctx)) }, ctx.quirks);
    },
    'GET /campaigns/:id/creatives/:id': (ctx) =>
      entityReply(200, creativeOf(store, ctx, campaignOf(store, ctx)), ctx.quirks),
    'PUT /campaigns/:id/creatives/:id': (ctx) => {
      const precheck = () => parseCreativeUpdate(ctx.body, undefined, undefined, ctx.quirks);
      const campaign = lookUp(ctx, () => campaignOf(store, ctx), precheck);
      const creative = lookUp(ctx, () => creativeOf(store, ctx, campaign), precheck);
      store.updateCreative(
        creative,
        parseCreativeUpdate(ctx.body, campaign.ad_format, creative.ad_type, ctx.quirks),
        stamp(ctx),
      );
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
