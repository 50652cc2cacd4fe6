// The API client as tests drive the emulator with it: the product's client (reads: reports and
// catalogue listings) plus the entity reads and writes no part of the product calls (create,
// update, delete and get of campaigns and creatives), sent over the same transport and policy.
import {
  createApiClient as createReadClient,
  transportOptions,
  type ApiClient as ReadClient,
  type ApiClientOptions,
} from '../../src/api/client.js';
import { apiResponseError, RESPONSE_HINT } from '../../src/api/errors.js';
import { Transport, type Method } from '../../src/api/http.js';
import { excerptOf, parseJsonBody } from '../../src/api/malformed.js';
import {
  entityId,
  type Campaign as ListedCampaign,
  type Creative as ListedCreative,
  type PageRequest,
} from '../../src/api/pages.js';
import { redactBuffer } from '../../src/platform/log/redact.js';

export type { ApiClientOptions };

// The spec's resources and write bodies, typed field by field: only the tests read or send them.
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

/** A campaign as the spec describes it (the product reads it permissively: src Campaign). */
export interface Campaign extends ListedCampaign {
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

/** A creative as the spec describes it. */
export interface Creative extends ListedCreative {
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

/** The product's client and the entity endpoints of the management API. */
export interface ApiClient extends Omit<
  ReadClient,
  'listCampaigns' | 'campaigns' | 'listCreatives' | 'creatives'
> {
  listCampaigns(page?: PageRequest): Promise<Campaign[]>;
  campaigns(pageSize?: number): AsyncIterable<Campaign[]>;
  listCreatives(campaignId: number, page?: PageRequest): Promise<Creative[]>;
  creatives(campaignId: number, pageSize?: number): AsyncIterable<Creative[]>;
  getCampaign(id: number): Promise<Campaign>;
  createCampaign(body: NewCampaign): Promise<{ campaign_id: number }>;
  updateCampaign(id: number, body: CampaignUpdate): Promise<void>;
  deleteCampaign(id: number): Promise<void>;
  getCreative(campaignId: number, id: number): Promise<Creative>;
  createCreative(campaignId: number, body: NewCreative): Promise<{ creative_id: number }>;
  updateCreative(campaignId: number, id: number, body: CreativeUpdate): Promise<void>;
  deleteCreative(campaignId: number, id: number): Promise<void>;
}

export function createApiClient(o: ApiClientOptions): ApiClient {
  const reads = createReadClient(o);
  const http = new Transport(transportOptions(o));
  const secrets = [o.apiKey];

  /** Sends and parses a JSON answer whose entity id `idField` must be readable (normalised to a number). */
  async function entity<T>(method: Method, path: string, body: unknown, idField: string): Promise<T> {
    let doc: unknown;
    const res = await http.send(method, path, body, undefined, (raw, contentType) => {
      const parsed = parseJsonBody(redactBuffer(raw, secrets), contentType);
      if (!parsed.ok) return parsed.problem;
      doc = parsed.doc;
      return undefined;
    });
    const object =
      typeof doc === 'object' && doc !== null && !Array.isArray(doc)
        ? (doc as Record<string, unknown>)
        : undefined;
    const id = object === undefined ? undefined : entityId(object[idField]);
    if (object === undefined || id === undefined)
      throw apiResponseError({
        status: res.status,
        method,
        path: http.fullPath(path),
        attempts: res.attempts,
        hint: RESPONSE_HINT,
        retryable: false,
        problem: `expected an object with an integer ${idField}`,
        excerpt: excerptOf(res.body, secrets),
      });
    object[idField] = id;
    return object as T;
  }
  const int = (n: number, what: string) => {
    if (!Number.isSafeInteger(n) || n < 0)
      throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
    return n;
  };
  const campaignPath = (id: number) => `/campaigns/${int(id, 'campaign id')}`;
  const creativesPath = (cid: number) => `${campaignPath(cid)}/creatives`;
  const creativePath = (cid: number, id: number) => `${creativesPath(cid)}/${int(id, 'creative id')}`;

  return {
    ...reads,
    getCampaign: (id) => entity<Campaign>('GET', campaignPath(id), undefined, 'campaign_id'),
    createCampaign: (body) => entity<{ campaign_id: number }>('POST', '/campaigns', body, 'campaign_id'),
    async updateCampaign(id, body) {
      await http.send('PUT', campaignPath(id), body);
    },
    async deleteCampaign(id) {
      await http.send('DELETE', campaignPath(id));
    },
    getCreative: (cid, id) => entity<Creative>('GET', creativePath(cid, id), undefined, 'creative_id'),
    createCreative: (cid, body) =>
      entity<{ creative_id: number }>('POST', creativesPath(cid), body, 'creative_id'),
    async updateCreative(cid, id, body) {
      await http.send('PUT', creativePath(cid, id), body);
    },
    async deleteCreative(cid, id) {
      await http.send('DELETE', creativePath(cid, id));
    },
    async close() {
      await Promise.all([reads.close(), http.close()]);
    },
  };
}
