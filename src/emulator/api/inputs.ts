// The spec's campaign and creative write bodies, validated: typed values, or a 400 naming the dotted path.
import type { AdFormat, Delivery, Pacing, Pricing } from '../catalogue.js';
import { AD_FORMATS, AD_TYPES, TARGET_WINDOWS } from '../catalogue.js';
import { isOneOf, isRecord, type Quirks } from '../options.js';
import { badRequest } from './http.js';

type Json = Record<string, unknown>;

export type CampaignCreate = ReturnType<typeof parseCampaignCreate>;
/** A validated PUT /campaigns/{id} body; `null` pricing/pacing means "unset" (reads show []). */
export type CampaignUpdate = ReturnType<typeof parseCampaignUpdate>;
export type CreativeCreate = ReturnType<typeof parseCreativeCreate>;
/** A validated PUT creative body; `targeting: null` unsets it (reads show []). */
export type CreativeUpdate = ReturnType<typeof parseCreativeUpdate>;

type BodyRules = Pick<Quirks, 'unknownFields' | 'strict'>;

interface Reader {
  readonly lenient: boolean;
  readonly unknownFields: 'drop' | 'reject';
  readonly at: string;
}

const pathOf = (r: Reader, name: string) => (r.at === '' ? name : `${r.at}.${name}`);
const within = (r: Reader, name: string): Reader => ({ ...r, at: pathOf(r, name) });

function objectBody(body: unknown): Json {
  if (!isRecord(body)) throw badRequest('The request body must be a JSON object.');
  return body;
}

function decode(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const t = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return JSON.parse(t);
    } catch {
      return value;
    }
  }
  return value;
}

function field(r: Reader, obj: Json, name: string, decoded = true): [unknown, string] {
  const path = pathOf(r, name);
  const value = obj[name];
  if (value === undefined) throw badRequest(`${path} is required.`, path);
  return [decoded && r.lenient ? decode(value) : value, path];
}

function opt<T>(obj: Json, name: string, read: (name: string) => T): T | undefined {
  return obj[name] === undefined ? undefined : read(name);
}

function str(r: Reader, obj: Json, name: string): string {
  const [value, path] = field(r, obj, name, false);
  if (typeof value !== 'string') throw badRequest(`${path} must be a string.`, path);
  return value;
}

function text(r: Reader, obj: Json, name: string): string {
  const value = str(r, obj, name);
  const path = pathOf(r, name);
  if (value.trim() === '') throw badRequest(`${path} must not be empty.`, path);
  return value;
}

function int(r: Reader, obj: Json, name: string, min?: number, max?: number): number {
  return checkInt(...field(r, obj, name), min, max);
}

function checkInt(value: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw badRequest(`${path} must be an integer.`, path);
  if (value < min || value > max) throw badRequest(`${path} must be from ${min} to ${max}.`, path);
  return value;
}

function bool(r: Reader, obj: Json, name: string): boolean {
  const [value, path] = field(r, obj, name);
  if (typeof value !== 'boolean') throw badRequest(`${path} must be true or false.`, path);
  return value;
}

function num(r: Reader, obj: Json, name: string): number {
  const [value, path] = field(r, obj, name);
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw badRequest(`${path} must be a number.`, path);
  return value;
}

function oneOf<T extends string>(r: Reader, obj: Json, name: string, allowed: readonly T[]): T {
  const value = str(r, obj, name);
  const path = pathOf(r, name);
  if (!isOneOf(allowed, value)) throw badRequest(`${path} must be one of: ${allowed.join(', ')}.`, path);
  return value;
}

/** An object field. `null` and `[]` (how reads show an unset object) return null, meaning "unset". */
function object(r: Reader, obj: Json, name: string): Json | null {
  const [value, path] = field(r, obj, name);
  if (value === null || (Array.isArray(value) && value.length === 0)) return null;
  if (!isRecord(value)) throw badRequest(`${path} must be an object.`, path);
  return value;
}

function nested<T>(r: Reader, b: Json, name: string, parse: (r: Reader, o: Json) => T): T | null | undefined {
  const o = opt(b, name, () => object(r, b, name));
  return o === undefined || o === null ? o : parse(within(r, name), o);
}

function knownFields(r: Reader, obj: Json, allowed: readonly string[]): void {
  const extra = r.unknownFields === 'reject' ? Object.keys(obj).find((k) => !allowed.includes(k)) : undefined;
  if (extra !== undefined) throw badRequest(`${pathOf(r, extra)} is not a known field.`, pathOf(r, extra));
}

function reader(rules: BodyRules, lenient = false): Reader {
  return { lenient, unknownFields: rules.unknownFields, at: '' };
}

export function parseCampaignCreate(body: unknown, rules: BodyRules) {
  const r = reader(rules);
  const b = objectBody(body);
  knownFields(r, b, ['name', 'folder_id', 'ad_format']);
  return {
    name: text(r, b, 'name'),
    folder_id: int(r, b, 'folder_id', 1),
    ad_format: oneOf(r, b, 'ad_format', AD_FORMATS),
  };
}

const UPDATE_FIELDS =
  'name is_active folder_id tier weight zone_ids conversion_tracker_id advertiser_id delivery pricing pacing';

export function parseCampaignUpdate(body: unknown, rules: BodyRules) {
  // The campaign update decodes string-encoded values, as the spec's own example sends them.
  const r = reader(rules, true);
  const b = objectBody(body);
  knownFields(r, b, UPDATE_FIELDS.split(' '));
  const zoneIds = arrayAt(...field(r, b, 'zone_ids'));
  return {
    name: text(r, b, 'name'),
    is_active: bool(r, b, 'is_active'),
    folder_id: int(r, b, 'folder_id', 1),
    tier: int(r, b, 'tier', 1, 10),
    weight: int(r, b, 'weight', 1, 100),
    zone_ids: zoneIds.map((z, i) =>
      checkInt(typeof z === 'string' && /^\d+$/.test(z) ? Number(z) : z, `zone_ids[${i}]`, 1),
    ),
    conversion_tracker_id: opt(b, 'conversion_tracker_id', (n) => int(r, b, n)),
    advertiser_id: opt(b, 'advertiser_id', (n) => int(r, b, n)),
    delivery: nested(r, b, 'delivery', parseDelivery) ?? undefined,
    pricing: nested(r, b, 'pricing', parsePricing),
    pacing: nested(r, b, 'pacing', parsePacing),
  };
}

/** A delivery object: start and end UNIX seconds, 0 meaning "now" / "no end"; end blank or null is 0. */
function parseDelivery(r: Reader, d: Json): Delivery {
  knownFields(r, d, ['start', 'end']);
  const start = int(r, d, 'start');
  const end = d.end === '' || d.end === null || d.end === undefined ? 0 : int(r, d, 'end');
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
    value: int(r, p, 'value', 0),
  };
}

function adType(r: Reader, b: Json, format: AdFormat | undefined): string {
  const value = str(r, b, 'ad_type');
  const allowed = format === undefined ? undefined : AD_TYPES[format];
  if (allowed !== undefined && !allowed.includes(value))
    throw badRequest(`ad_type of a ${format} campaign must be one of: ${allowed.join(', ')}.`, 'ad_type');
  return value;
}

export function parseCreativeCreate(body: unknown, format: AdFormat | undefined, rules: BodyRules) {
  const r = reader(rules);
  const b = objectBody(body);
  knownFields(r, b, ['name', 'ad_type']);
  return { name: text(r, b, 'name'), ad_type: adType(r, b, format) };
}

const IMAGE_STYLE_TYPES: readonly string[] = ['image', 'video', 'zip'];

/** A PUT creative body, data checked by ad_type else `currentType`; with both undefined, only the rest. */
export function parseCreativeUpdate(
  body: unknown,
  format: AdFormat | undefined,
  currentType: string | undefined,
  rules: BodyRules,
) {
  const r = reader(rules);
  const b = objectBody(body);
  knownFields(r, b, ['name', 'is_active', 'data', 'ad_type', 'weight', 'delivery', 'targeting']);
  const name = text(r, b, 'name');
  const is_active = bool(r, b, 'is_active');
  const type = opt(b, 'ad_type', () => adType(r, b, format));
  const data = object(r, b, 'data');
  if (data === null) throw badRequest('data must be an object.', 'data');
  const dataType = type ?? currentType;
  return {
    name,
    is_active,
    ad_type: type,
    data:
      dataType !== undefined && IMAGE_STYLE_TYPES.includes(dataType)
        ? parseImageData(within(r, 'data'), data)
        : data,
    weight: opt(b, 'weight', (n) => int(r, b, n, 1, 100)),
    delivery: nested(r, b, 'delivery', parseDelivery) ?? undefined,
    targeting: nested(r, b, 'targeting', (_, t) => parseTargeting(t, rules.strict)),
  };
}

const IMAGE_DATA_FIELDS =
  'filehash width height alt_text target_window use_iframe landing_page ad_verification_code';

function parseImageData(r: Reader, d: Json): Json {
  knownFields(r, d, IMAGE_DATA_FIELDS.split(' '));
  const out: Json = {
    filehash: text(r, d, 'filehash'),
    width: int(r, d, 'width', 1),
    height: int(r, d, 'height', 1),
  };
  for (const name of ['alt_text', 'landing_page', 'ad_verification_code']) {
    const value = opt(d, name, (n) => str(r, d, n));
    if (value !== undefined) out[name] = value;
  }
  if (d.target_window !== undefined) out.target_window = oneOf(r, d, 'target_window', TARGET_WINDOWS);
  const iframe = opt(d, 'use_iframe', (n) => bool(r, d, n));
  if (iframe !== undefined) out.use_iframe = iframe;
  return out;
}

const DEVICES = ['desktop', 'tablet', 'mobile'];
/** The spec shows '=' and '>' in an example; the emulator accepts the usual comparison set. */
const KEYVALUE_OPERATORS = ['=', '!=', '>', '>=', '<', '<='];
const COUNTRY_CODES = {
  strict: [/^[A-Z]{2}$/, 'a 2-letter uppercase country code (ISO 3166-1 alpha-2)'],
  lenient: [/^[A-Z]{2,3}$/, 'a 2- or 3-letter uppercase country code (ISO 3166-1 alpha-2 or alpha-3)'],
} as const;

function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw badRequest(`${path} must be an array.`, path);
  return value;
}

function strings(value: unknown, path: string, ok: (v: string) => boolean, what: string): string[] {
  return arrayAt(value, path).map((v, i) => {
    if (typeof v !== 'string' || !ok(v)) throw badRequest(`${path}[${i}] must be ${what}.`, `${path}[${i}]`);
    return v;
  });
}

function includeExclude(r: Reader, t: Json, name: string): [Reader, Json, string] | undefined {
  const o = opt(t, name, () => object(r, t, name));
  if (o === undefined || o === null) return undefined;
  const inner = within(r, name);
  return [inner, o, oneOf(inner, o, 'type', ['include', 'exclude'])];
}

/** Unknown fields always rejected (a typo would drop targeting); alpha-3 countries allowed unless strict. */
function parseTargeting(t: Json, strict: boolean): Json {
  const r: Reader = { lenient: false, unknownFields: 'reject', at: 'targeting' };
  knownFields(r, t, ['devices', 'geo', 'languages', 'keywords', 'keyvalues']);
  const out: Json = {};
  if (t.devices !== undefined) {
    const what = `one of: ${DEVICES.join(', ')}`;
    out.devices = strings(t.devices, 'targeting.devices', (d) => DEVICES.includes(d), what);
  }
  const geo = includeExclude(r, t, 'geo');
  if (geo !== undefined) {
    const [g, o, type] = geo;
    const locations = object(g, o, 'locations');
    if (locations === null)
      throw badRequest('targeting.geo.locations must be an object.', 'targeting.geo.locations');
    const [pattern, what] = strict ? COUNTRY_CODES.strict : COUNTRY_CODES.lenient;
    const path = 'targeting.geo.locations.countries';
    const countries = () => strings(locations.countries, path, (c) => pattern.test(c), what);
    out.geo = { type, locations: locations.countries === undefined ? {} : { countries: countries() } };
  }
  const languages = includeExclude(r, t, 'languages');
  if (languages !== undefined) {
    const [, o, type] = languages;
    const path = 'targeting.languages.items';
    if (o.items === undefined) throw badRequest(`${path} is required.`, path);
    // A spec example sends one language as a plain string: accepted as a one-element array.
    const items = typeof o.items === 'string' ? [o.items] : o.items;
    const what = 'a 2-letter lowercase language code (ISO 639-1)';
    out.languages = { type, items: strings(items, path, (l) => /^[a-z]{2}$/.test(l), what) };
  }
  const groups = (name: string, each: (group: unknown, path: string) => unknown[]) =>
    arrayAt(t[name], `targeting.${name}`).map((g, i) => each(g, `targeting.${name}[${i}]`));
  if (t.keywords !== undefined)
    out.keywords = groups('keywords', (g, path) =>
      strings(g, path, (k) => k.trim() !== '', 'a non-empty string'),
    );
  if (t.keyvalues !== undefined)
    out.keyvalues = groups('keyvalues', (g, path) =>
      arrayAt(g, path).map((kv, i) => parseKeyValue(kv, `${path}[${i}]`)),
    );
  return out;
}

function parseKeyValue(kv: unknown, path: string): Json {
  if (!isRecord(kv)) throw badRequest(`${path} must be an object.`, path);
  knownFields({ lenient: false, unknownFields: 'reject', at: path }, kv, ['key', 'operator', 'value']);
  const need = (name: string): string => {
    const value = kv[name];
    if (typeof value !== 'string')
      throw badRequest(`${path}.${name} is required and must be a string.`, `${path}.${name}`);
    return value;
  };
  const [key, operator, value] = [need('key'), need('operator'), need('value')];
  if (key.trim() === '') throw badRequest(`${path}.key must not be empty.`, `${path}.key`);
  if (!KEYVALUE_OPERATORS.includes(operator))
    throw badRequest(`${path}.operator must be one of: ${KEYVALUE_OPERATORS.join(' ')}.`, `${path}.operator`);
  return { key, operator, value };
}
