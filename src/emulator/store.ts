/** The catalogue behind the campaign and creative endpoints: the seeded one, then changed by writes. */
import type { CampaignCreate, CampaignUpdate, CreativeCreate, CreativeUpdate } from './api/inputs.js';
import { EVENT_COUNTS, type Campaign, type Catalogue, type Creative, uniqueIds } from './catalogue.js';
import { createRng, mixSeed } from './prng.js';

/** Who and when (UNIX seconds by the emulator clock) a write happened. */
export interface WriteStamp {
  readonly at: number;
  readonly accountId: number;
}

/** A deep copy of the seeded catalogue that writes change; reports keep using the seeded one, so writes never
 * change report data. Lists are ordered by id (the spec leaves order open). */
export class CatalogueStore {
  private readonly campaigns = new Map<number, Campaign>();
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

  getCampaign(id: number): Campaign | undefined {
    return this.campaigns.get(id);
  }

  createCampaign(input: CampaignCreate, stamp: WriteStamp): number {
    const id = this.nextId();
    this.campaigns.set(id, {
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
      zone_ids: [],
      creative_ids: [],
      delivery: { start: 0, end: 0 },
      event_counts: Object.fromEntries(EVENT_COUNTS.map((k) => [k, 0])) as Campaign['event_counts'],
      pricing: [],
      pacing: [],
      targeting: [],
      creative_optimization: [],
      metadata: [],
      watchlist: [],
    });
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
    this.creatives.set(id, {
      creative_id: id,
      campaign_id: campaign.campaign_id,
      ...input,
      is_active: false,
      account_id_created: stamp.accountId,
      account_id_modified: stamp.accountId,
      created: stamp.at,
      modified: stamp.at,
      weight: 50,
      data: {},
      delivery: { start: 0, end: 0 },
      targeting: [],
      event_counts: [],
      metadata: [],
      thumbnail: { average_color: '#000000', filehash: '' },
    });
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

  private touch(entity: { modified: number; account_id_modified: number }, stamp: WriteStamp): void {
    entity.modified = stamp.at;
    entity.account_id_modified = stamp.accountId;
  }
}
