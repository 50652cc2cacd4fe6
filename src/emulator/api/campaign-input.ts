import { AD_FORMATS, type AdFormat, type Delivery, type Pacing, type Pricing } from '../entities.js';
import { badRequest } from './errors.js';
import {
  array,
  bool,
  checkInt,
  int,
  knownFields,
  num,
  object,
  objectBody,
  oneOf,
  text,
  type Json,
  type Reader,
} from './validate.js';

/** A validated POST /campaigns body. */
export interface CampaignCreate {
  name: string;
  folder_id: number;
  ad_format: AdFormat;
}

/** A validated PUT /campaigns/{id} body; `null` pricing/pacing means "unset" (reads show []). */
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
  pricing?: Pricing | null;
  pacing?: Pacing | null;
}

/** What a body may hold beyond its known fields (the unknownFields quirk). */
export interface BodyRules {
  readonly unknownFields: 'drop' | 'reject';
}

const CREATE_FIELDS = ['name', 'folder_id', 'ad_format'];
const UPDATE_FIELDS = [
  'name',
  'is_active',
  'folder_id',
  'tier',
  'weight',
  'zone_ids',
  'conversion_tracker_id',
  'advertiser_id',
  'delivery',
  'pricing',
  'pacing',
];

/** Validates a POST /campaigns body (400 on the first problem). */
export function parseCampaignCreate(
  body: unknown,
  rules: BodyRules = { unknownFields: 'drop' },
): CampaignCreate {
  const STRICT: Reader = { lenient: false, unknownFields: rules.unknownFields };
  const b = objectBody(body);
  knownFields(STRICT, b, CREATE_FIELDS);
  return {
    name: text(STRICT, b, 'name') as string,
    folder_id: int(STRICT, b, 'folder_id', 'folder_id', { min: 1 }) as number,
    ad_format: oneOf(STRICT, b, 'ad_format', AD_FORMATS) as AdFormat,
  };
}

/** Validates a PUT /campaigns/{id} body (400 on the first problem). */
export function parseCampaignUpdate(
  body: unknown,
  rules: BodyRules = { unknownFields: 'drop' },
): CampaignUpdate {
  // The campaign update decodes string-encoded values, as the spec's own example sends them.
  const r: Reader = { lenient: true, unknownFields: rules.unknownFields };
  const b = objectBody(body);
  knownFields(r, b, UPDATE_FIELDS);
  const zoneIds = array(r, b, 'zone_ids') as unknown[];
  const update: CampaignUpdate = {
    name: text(r, b, 'name') as string,
    is_active: bool(r, b, 'is_active') as boolean,
    folder_id: int(r, b, 'folder_id', 'folder_id', { min: 1 }) as number,
    tier: int(r, b, 'tier', 'tier', { min: 1, max: 10 }) as number,
    weight: int(r, b, 'weight', 'weight', { min: 1, max: 100 }) as number,
    zone_ids: zoneIds.map((z, i) =>
      checkInt(typeof z === 'string' && /^\d+$/.test(z) ? Number(z) : z, `zone_ids[${i}]`, 1),
    ),
  };
  const tracker = int(r, b, 'conversion_tracker_id', 'conversion_tracker_id', { optional: true });
  if (tracker !== undefined) update.conversion_tracker_id = tracker;
  const advertiser = int(r, b, 'advertiser_id', 'advertiser_id', { optional: true });
  if (advertiser !== undefined) update.advertiser_id = advertiser;
  const delivery = object(r, b, 'delivery', 'delivery', true);
  if (delivery !== undefined && delivery !== null)
    update.delivery = parseDelivery(r, delivery, 'delivery', true);
  const pricing = object(r, b, 'pricing', 'pricing', true);
  if (pricing !== undefined) update.pricing = pricing === null ? null : parsePricing(r, pricing);
  const pacing = object(r, b, 'pacing', 'pacing', true);
  if (pacing !== undefined) update.pacing = pacing === null ? null : parsePacing(r, pacing);
  return update;
}

/** A delivery object: start and end UNIX seconds, 0 meaning "now" / "no end"; end blank or null is 0. */
export function parseDelivery(r: Reader, d: Json, path: string, startRequired: boolean): Delivery {
  knownFields(r, d, ['start', 'end'], path);
  const start = int(r, d, 'start', `${path}.start`, { optional: !startRequired }) ?? 0;
  const rawEnd = d.end === '' || d.end === null ? undefined : d.end;
  const end = rawEnd === undefined ? 0 : (int(r, { end: rawEnd }, 'end', `${path}.end`) as number);
  if (end !== 0 && end < start)
    throw badRequest(`${path}.end must be 0 or not before ${path}.start.`, `${path}.end`);
  return { start, end };
}

function parsePricing(r: Reader, p: Json): Pricing {
  knownFields(r, p, ['model', 'value'], 'pricing');
  const model = oneOf(r, p, 'model', ['CPM', 'CPC'] as const, 'pricing.model') as 'CPM' | 'CPC';
  const value = num(r, p, 'value', 'pricing.value') as number;
  if (value < 0) throw badRequest('pricing.value must not be negative.', 'pricing.value');
  return { model, value };
}

function parsePacing(r: Reader, p: Json): Pacing {
  knownFields(r, p, ['event', 'period', 'speed', 'value'], 'pacing');
  return {
    event: oneOf(r, p, 'event', ['impressions', 'clicks', 'conversions'] as const, 'pacing.event') as string,
    period: oneOf(r, p, 'period', ['due_date', 'day'] as const, 'pacing.period') as string,
    // The spec's parameter list says "spead", its example "spread": both are accepted and stored as sent.
    speed: oneOf(r, p, 'speed', ['spread', 'spead', 'asap'] as const, 'pacing.speed') as string,
    value: int(r, p, 'value', 'pacing.value', { min: 0 }) as number,
  };
}
