// The API client as tests drive the emulator with it: the product's client (reads: reports and
// catalogue listings) plus the entity reads and writes no part of the product calls (create,
// update, delete and get of campaigns and creatives), sent over the same transport and policy.
import {
  createApiClient as createReadClient,
  transportOptions,
  type ApiClient as ReadClient,
  type ApiClientOptions,
} from '../../src/api/client.js';
import { ApiResponseError, RESPONSE_HINT } from '../../src/api/errors.js';
import { Transport, type Method } from '../../src/api/http.js';
import { excerptOf, parseJsonBody } from '../../src/api/malformed.js';
import {
  entityId,
  type AdFormat,
  type Campaign,
  type Creative,
  type CreativeData,
  type Delivery,
  type Pacing,
  type Pricing,
} from '../../src/api/pages.js';
import { redactBuffer } from '../../src/log/redact.js';

export type { ApiClientOptions };

// The spec's write bodies: only the tests send them.
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
export interface ApiClient extends ReadClient {
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
      throw new ApiResponseError({
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
