import { AD_TYPES, type AdFormat, type Delivery } from '../entities.js';
import { parseDelivery, type BodyRules } from './campaign-input.js';
import { badRequest } from './errors.js';
import { parseTargeting } from './targeting.js';
import { bool, int, knownFields, object, objectBody, str, text, type Json, type Reader } from './validate.js';

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
