import type { Campaign } from '../entities.js';
import type { CatalogueStore, WriteStamp } from '../store.js';
import { parseCampaignCreate, parseCampaignUpdate } from './campaign-input.js';
import { parseCreativeCreate, parseCreativeUpdate } from './creative-input.js';
import { notFound } from './errors.js';
import { json, NO_CONTENT, type Handler, type RequestContext } from './http.js';
import { page, pathId } from './paging.js';

function stamp(ctx: RequestContext): WriteStamp {
  return { at: Math.floor(ctx.now.getTime() / 1000), accountId: ctx.accountId };
}

function campaignOf(store: CatalogueStore, ctx: RequestContext): Campaign {
  const id = pathId(ctx.ids[0], 'campaign_id');
  const campaign = store.getCampaign(id);
  if (campaign === undefined) throw notFound(`Campaign ${id} does not exist.`);
  return campaign;
}

function creativeOf(store: CatalogueStore, ctx: RequestContext, campaign: Campaign) {
  const id = pathId(ctx.ids[1], 'creative_id');
  const creative = store.getCreative(campaign.campaign_id, id);
  if (creative === undefined)
    throw notFound(`Creative ${id} does not exist in campaign ${campaign.campaign_id}.`);
  return creative;
}

/** Handlers of the campaign and creative endpoints, keyed 'METHOD pattern'. */
export function catalogueHandlers(store: CatalogueStore): Record<string, Handler> {
  return {
    'GET /campaigns': (ctx) => json(200, page(store.listCampaigns(), ctx.query)),
    'POST /campaigns': (ctx) =>
      json(201, { campaign_id: store.createCampaign(parseCampaignCreate(ctx.body), stamp(ctx)) }),
    'GET /campaigns/:id': (ctx) => json(200, campaignOf(store, ctx)),
    'PUT /campaigns/:id': (ctx) => {
      const campaign = campaignOf(store, ctx);
      store.updateCampaign(campaign.campaign_id, parseCampaignUpdate(ctx.body), stamp(ctx));
      return NO_CONTENT;
    },
    'DELETE /campaigns/:id': (ctx) => {
      store.deleteCampaign(campaignOf(store, ctx).campaign_id);
      return NO_CONTENT;
    },
    'GET /campaigns/:id/creatives': (ctx) => {
      const campaign = campaignOf(store, ctx);
      return json(200, page(store.listCreatives(campaign.campaign_id) ?? [], ctx.query));
    },
    'POST /campaigns/:id/creatives': (ctx) => {
      const campaign = campaignOf(store, ctx);
      const input = parseCreativeCreate(ctx.body, campaign.ad_format);
      return json(201, { creative_id: store.createCreative(campaign, input, stamp(ctx)) });
    },
    'GET /campaigns/:id/creatives/:id': (ctx) => json(200, creativeOf(store, ctx, campaignOf(store, ctx))),
    'PUT /campaigns/:id/creatives/:id': (ctx) => {
      const campaign = campaignOf(store, ctx);
      const creative = creativeOf(store, ctx, campaign);
      store.updateCreative(
        creative,
        parseCreativeUpdate(ctx.body, campaign.ad_format, creative.ad_type),
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
