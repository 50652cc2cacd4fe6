import { AD_TYPES, type AdFormat, type Delivery } from '../entities.js';
import { parseDelivery } from './campaign-input.js';
import { badRequest } from './errors.js';
import { parseTargeting } from './targeting.js';
import { bool, int, object, objectBody, str, text, type Json, type Reader } from './validate.js';

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

const STRICT: Reader = { lenient: false };
/** Ad types whose data follows the spec's documented image-style schema. */
export const IMAGE_STYLE_TYPES: readonly string[] = ['image', 'video', 'zip'];
const TARGET_WINDOWS = ['_blank', '_top', '_self', '_parent'];

function adType(b: Json, format: AdFormat, optional: boolean): string | undefined {
  const value = str(STRICT, b, 'ad_type', 'ad_type', optional);
  if (value === undefined) return undefined;
  const allowed = AD_TYPES[format];
  if (!allowed.includes(value))
    throw badRequest(`ad_type of a ${format} campaign must be one of: ${allowed.join(', ')}.`, 'ad_type');
  return value;
}

/** Validates a POST creative body against the owning campaign's ad_format. */
export function parseCreativeCreate(body: unknown, format: AdFormat): CreativeCreate {
  const b = objectBody(body);
  return { name: text(STRICT, b, 'name') as string, ad_type: adType(b, format, false) as string };
}

/**
 * Validates a PUT creative body. `currentType` is the creative's ad_type, used for the data schema
 * unless the body changes it (allowed when the new type fits the campaign's format).
 */
export function parseCreativeUpdate(body: unknown, format: AdFormat, currentType: string): CreativeUpdate {
  const b = objectBody(body);
  const update: CreativeUpdate = {
    name: text(STRICT, b, 'name') as string,
    is_active: bool(STRICT, b, 'is_active') as boolean,
    data: {},
  };
  const type = adType(b, format, true);
  if (type !== undefined) update.ad_type = type;
  const data = object(STRICT, b, 'data');
  if (data === null || data === undefined) throw badRequest('data must be an object.', 'data');
  update.data = IMAGE_STYLE_TYPES.includes(type ?? currentType) ? parseImageData(data) : data;
  const weight = int(STRICT, b, 'weight', 'weight', { optional: true, min: 1, max: 100 });
  if (weight !== undefined) update.weight = weight;
  const delivery = object(STRICT, b, 'delivery', 'delivery', true);
  if (delivery !== undefined && delivery !== null)
    update.delivery = parseDelivery(STRICT, delivery, 'delivery', true);
  const targeting = object(STRICT, b, 'targeting', 'targeting', true);
  if (targeting !== undefined) update.targeting = targeting === null ? null : parseTargeting(targeting);
  return update;
}

/** The spec's image-style data: filehash, width and height required; the rest typed when present. */
function parseImageData(d: Json): Json {
  const out: Json = {
    filehash: text(STRICT, d, 'filehash', 'data.filehash'),
    width: int(STRICT, d, 'width', 'data.width', { min: 1 }),
    height: int(STRICT, d, 'height', 'data.height', { min: 1 }),
  };
  for (const name of ['alt_text', 'landing_page', 'ad_verification_code']) {
    const value = str(STRICT, d, name, `data.${name}`, true);
    if (value !== undefined) out[name] = value;
  }
  const window = str(STRICT, d, 'target_window', 'data.target_window', true);
  if (window !== undefined) {
    if (!TARGET_WINDOWS.includes(window))
      throw badRequest(
        `data.target_window must be one of: ${TARGET_WINDOWS.join(', ')}.`,
        'data.target_window',
      );
    out.target_window = window;
  }
  const iframe = bool(STRICT, d, 'use_iframe', 'data.use_iframe', true);
  if (iframe !== undefined) out.use_iframe = iframe;
  return out;
}
