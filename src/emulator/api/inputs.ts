import {
  AD_FORMATS,
  AD_TYPES,
  type AdFormat,
  type Delivery,
  type Pacing,
  type Pricing,
} from '../catalogue.js';
import { badRequest } from './http.js';
import {
  array,
  bool,
  checkInt,
  int,
  type Json,
  knownFields,
  num,
  object,
  objectBody,
  oneOf,
  parseTargeting,
  type Reader,
  str,
  text,
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

/** A validated POST /campaigns/{id}/creatives body. */
export interface CreativeCreate {
  name: string;
  ad_type: string;
}

/** A validated PUT creative body; `targeting: null` unsets it (reads show []). */
export interface CreativeUpdate {
  name: string;
  is_active: boolean;
  data: Json;
  ad_type?: string;
  weight?: number;
  delivery?: Delivery;
  targeting?: Json | null;
}

/** The creative body rules: the unknownFields quirk, and strict 2-letter country codes. */
export interface CreativeRules extends BodyRules {
  readonly strict: boolean;
}

const DEFAULT_RULES: CreativeRules = { unknownFields: 'drop', strict: false };
const IMAGE_DATA_FIELDS = [
  'filehash',
  'width',
  'height',
  'alt_text',
  'target_window',
  'use_iframe',
  'landing_page',
  'ad_verification_code',
];
/** Ad types whose data follows the spec's documented image-style schema. */
export const IMAGE_STYLE_TYPES: readonly string[] = ['image', 'video', 'zip'];
const TARGET_WINDOWS = ['_blank', '_top', '_self', '_parent'];

/** The body's ad_type, checked against the campaign's format when it is known. */
function adType(r: Reader, b: Json, format: AdFormat | undefined, optional: boolean): string | undefined {
  const value = str(r, b, 'ad_type', 'ad_type', optional);
  if (value === undefined || format === undefined) return value;
  const allowed = AD_TYPES[format];
  if (!allowed.includes(value))
    throw badRequest(`ad_type of a ${format} campaign must be one of: ${allowed.join(', ')}.`, 'ad_type');
  return value;
}

/**
 * Validates a POST creative body against the owning campaign's ad_format; with `format` undefined
 * (the campaign is not looked up yet) only what does not depend on it.
 */
export function parseCreativeCreate(
  body: unknown,
  format: AdFormat | undefined,
  rules: BodyRules = DEFAULT_RULES,
): CreativeCreate {
  const r: Reader = { lenient: false, unknownFields: rules.unknownFields };
  const b = objectBody(body);
  knownFields(r, b, ['name', 'ad_type']);
  return { name: text(r, b, 'name') as string, ad_type: adType(r, b, format, false) as string };
}

/**
 * Validates a PUT creative body. `currentType` is the creative's ad_type, used for the data schema
 * unless the body changes it (allowed when the new type fits the campaign's format). With `format`
 * and `currentType` undefined (nothing looked up yet) only what depends on neither is checked.
 */
export function parseCreativeUpdate(
  body: unknown,
  format: AdFormat | undefined,
  currentType: string | undefined,
  rules: CreativeRules = DEFAULT_RULES,
): CreativeUpdate {
  const r: Reader = { lenient: false, unknownFields: rules.unknownFields };
  const b = objectBody(body);
  knownFields(r, b, ['name', 'is_active', 'data', 'ad_type', 'weight', 'delivery', 'targeting']);
  const update: CreativeUpdate = {
    name: text(r, b, 'name') as string,
    is_active: bool(r, b, 'is_active') as boolean,
    data: {},
  };
  const type = adType(r, b, format, true);
  if (type !== undefined) update.ad_type = type;
  const data = object(r, b, 'data');
  if (data === null || data === undefined) throw badRequest('data must be an object.', 'data');
  const dataType = type ?? currentType;
  update.data =
    dataType !== undefined && IMAGE_STYLE_TYPES.includes(dataType) ? parseImageData(r, data) : data;
  const weight = int(r, b, 'weight', 'weight', { optional: true, min: 1, max: 100 });
  if (weight !== undefined) update.weight = weight;
  const delivery = object(r, b, 'delivery', 'delivery', true);
  if (delivery !== undefined && delivery !== null)
    update.delivery = parseDelivery(r, delivery, 'delivery', true);
  const targeting = object(r, b, 'targeting', 'targeting', true);
  if (targeting !== undefined)
    update.targeting = targeting === null ? null : parseTargeting(targeting, { strict: rules.strict });
  return update;
}

/** The spec's image-style data: filehash, width and height required; the rest typed when present. */
function parseImageData(r: Reader, d: Json): Json {
  knownFields(r, d, IMAGE_DATA_FIELDS, 'data');
  const out: Json = {
    filehash: text(r, d, 'filehash', 'data.filehash'),
    width: int(r, d, 'width', 'data.width', { min: 1 }),
    height: int(r, d, 'height', 'data.height', { min: 1 }),
  };
  for (const name of ['alt_text', 'landing_page', 'ad_verification_code']) {
    const value = str(r, d, name, `data.${name}`, true);
    if (value !== undefined) out[name] = value;
  }
  const window = str(r, d, 'target_window', 'data.target_window', true);
  if (window !== undefined) {
    if (!TARGET_WINDOWS.includes(window))
      throw badRequest(
        `data.target_window must be one of: ${TARGET_WINDOWS.join(', ')}.`,
        'data.target_window',
      );
    out.target_window = window;
  }
  const iframe = bool(r, d, 'use_iframe', 'data.use_iframe', true);
  if (iframe !== undefined) out.use_iframe = iframe;
  return out;
}
