/** The campaign and creative write bodies of the spec, validated (400 on the first problem). */
import {
  AD_FORMATS,
  AD_TYPES,
  TARGET_WINDOWS,
  type AdFormat,
  type Delivery,
  type Pacing,
  type Pricing,
} from '../catalogue.js';
import type { Quirks } from '../options.js';
import { badRequest } from './http.js';
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
  parseTargeting,
  str,
  text,
  within,
  type Json,
  type Reader,
} from './validate.js';

/** A validated POST /campaigns body. */
export type CampaignCreate = ReturnType<typeof parseCampaignCreate>;
/** A validated PUT /campaigns/{id} body; `null` pricing/pacing means "unset" (reads show []). */
export type CampaignUpdate = ReturnType<typeof parseCampaignUpdate>;
/** A validated POST /campaigns/{id}/creatives body. */
export type CreativeCreate = ReturnType<typeof parseCreativeCreate>;
/** A validated PUT creative body; `targeting: null` unsets it (reads show []). */
export type CreativeUpdate = ReturnType<typeof parseCreativeUpdate>;

/** The quirks that decide how bodies are read: unknown fields dropped or rejected, strict country codes. */
type BodyRules = Pick<Quirks, 'unknownFields' | 'strict'>;

const UPDATE_FIELDS =
  'name is_active folder_id tier weight zone_ids conversion_tracker_id advertiser_id delivery pricing pacing';
const IMAGE_DATA_FIELDS =
  'filehash width height alt_text target_window use_iframe landing_page ad_verification_code';
/** Ad types whose data follows the spec's documented image-style schema. */
const IMAGE_STYLE_TYPES: readonly string[] = ['image', 'video', 'zip'];

function reader(rules: BodyRules, lenient = false): Reader {
  return { lenient, unknownFields: rules.unknownFields, at: '' };
}

/** A nested object read by `parse`: undefined when absent, null when unset (null or []). */
function nested<T>(r: Reader, b: Json, name: string, parse: (r: Reader, o: Json) => T): T | null | undefined {
  const o = object(r, b, name, true);
  return o === undefined || o === null ? o : parse(within(r, name), o);
}

export function parseCampaignCreate(body: unknown, rules: BodyRules) {
  const r = reader(rules);
  const b = objectBody(body);
  knownFields(r, b, ['name', 'folder_id', 'ad_format']);
  return {
    name: text(r, b, 'name') as string,
    folder_id: int(r, b, 'folder_id', { min: 1 }) as number,
    ad_format: oneOf(r, b, 'ad_format', AD_FORMATS),
  };
}

export function parseCampaignUpdate(body: unknown, rules: BodyRules) {
  // The campaign update decodes string-encoded values, as the spec's own example sends them.
  const r = reader(rules, true);
  const b = objectBody(body);
  knownFields(r, b, UPDATE_FIELDS.split(' '));
  const zoneIds = array(r, b, 'zone_ids');
  return {
    name: text(r, b, 'name') as string,
    is_active: bool(r, b, 'is_active') as boolean,
    folder_id: int(r, b, 'folder_id', { min: 1 }) as number,
    tier: int(r, b, 'tier', { min: 1, max: 10 }) as number,
    weight: int(r, b, 'weight', { min: 1, max: 100 }) as number,
    zone_ids: zoneIds.map((z, i) =>
      checkInt(typeof z === 'string' && /^\d+$/.test(z) ? Number(z) : z, `zone_ids[${i}]`, 1),
    ),
    conversion_tracker_id: int(r, b, 'conversion_tracker_id', { optional: true }),
    advertiser_id: int(r, b, 'advertiser_id', { optional: true }),
    delivery: nested(r, b, 'delivery', parseDelivery) ?? undefined,
    pricing: nested(r, b, 'pricing', parsePricing),
    pacing: nested(r, b, 'pacing', parsePacing),
  };
}

/** A delivery object: start and end UNIX seconds, 0 meaning "now" / "no end"; end blank or null is 0. */
function parseDelivery(r: Reader, d: Json): Delivery {
  knownFields(r, d, ['start', 'end']);
  const start = int(r, d, 'start') as number;
  const rawEnd = d.end === '' || d.end === null ? undefined : d.end;
  const end = rawEnd === undefined ? 0 : (int(r, { end: rawEnd }, 'end') as number);
  if (end !== 0 && end < start)
    throw badRequest(`${r.at}.end must be 0 or not before ${r.at}.start.`, `${r.at}.end`);
  return { start, end };
}

function parsePricing(r: Reader, p: Json): Pricing {
  knownFields(r, p, ['model', 'value']);
  const model = oneOf(r, p, 'model', ['CPM', 'CPC']);
  const value = num(r, p, 'value');
  if (value < 0) throw badRequest('pricing.value must not be negative.', 'pricing.value');
  return { model, value };
}

function parsePacing(r: Reader, p: Json): Pacing {
  knownFields(r, p, ['event', 'period', 'speed', 'value']);
  return {
    event: oneOf(r, p, 'event', ['impressions', 'clicks', 'conversions']),
    period: oneOf(r, p, 'period', ['due_date', 'day']),
    // The spec's parameter list says "spead", its example "spread": both are accepted and stored as sent.
    speed: oneOf(r, p, 'speed', ['spread', 'spead', 'asap']),
    value: int(r, p, 'value', { min: 0 }) as number,
  };
}

/** The body's ad_type, checked against the campaign's format when it is known. */
function adType(r: Reader, b: Json, format: AdFormat | undefined, optional: boolean): string | undefined {
  const value = str(r, b, 'ad_type', optional);
  if (value === undefined || format === undefined) return value;
  const allowed = AD_TYPES[format];
  if (!allowed.includes(value))
    throw badRequest(`ad_type of a ${format} campaign must be one of: ${allowed.join(', ')}.`, 'ad_type');
  return value;
}

/** Validates a POST creative body; with `format` undefined (no campaign yet) only what does not depend on it. */
export function parseCreativeCreate(body: unknown, format: AdFormat | undefined, rules: BodyRules) {
  const r = reader(rules);
  const b = objectBody(body);
  knownFields(r, b, ['name', 'ad_type']);
  return { name: text(r, b, 'name') as string, ad_type: adType(r, b, format, false) as string };
}

/** Validates a PUT creative body; its data by the body's ad_type, else the creative's `currentType`. With
 * `format` and `currentType` undefined (nothing looked up yet) only what depends on neither. */
export function parseCreativeUpdate(
  body: unknown,
  format: AdFormat | undefined,
  currentType: string | undefined,
  rules: BodyRules,
) {
  const r = reader(rules);
  const b = objectBody(body);
  knownFields(r, b, ['name', 'is_active', 'data', 'ad_type', 'weight', 'delivery', 'targeting']);
  const name = text(r, b, 'name') as string;
  const is_active = bool(r, b, 'is_active') as boolean;
  const type = adType(r, b, format, true);
  const data = object(r, b, 'data');
  if (data === null || data === undefined) throw badRequest('data must be an object.', 'data');
  const dataType = type ?? currentType;
  return {
    name,
    is_active,
    ad_type: type,
    data:
      dataType !== undefined && IMAGE_STYLE_TYPES.includes(dataType)
        ? parseImageData(within(r, 'data'), data)
        : data,
    weight: int(r, b, 'weight', { optional: true, min: 1, max: 100 }),
    delivery: nested(r, b, 'delivery', parseDelivery) ?? undefined,
    targeting: nested(r, b, 'targeting', (_, t) => parseTargeting(t, rules.strict)),
  };
}

/** The spec's image-style data: filehash, width and height required; the rest typed when present. */
function parseImageData(r: Reader, d: Json): Json {
  knownFields(r, d, IMAGE_DATA_FIELDS.split(' '));
  const out: Json = {
    filehash: text(r, d, 'filehash'),
    width: int(r, d, 'width', { min: 1 }),
    height: int(r, d, 'height', { min: 1 }),
  };
  for (const name of ['alt_text', 'landing_page', 'ad_verification_code']) {
    const value = str(r, d, name, true);
    if (value !== undefined) out[name] = value;
  }
  if (d.target_window !== undefined) out.target_window = oneOf(r, d, 'target_window', TARGET_WINDOWS);
  const iframe = bool(r, d, 'use_iframe', true);
  if (iframe !== undefined) out.use_iframe = iframe;
  return out;
}
