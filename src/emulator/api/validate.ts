import { badRequest } from './http.js';

/**
 * Field checkers for request bodies. Each returns the typed value or throws a 400 naming the
 * field. In `lenient` mode (the campaign update, whose spec example sends every value as a string)
 * string-encoded numbers, booleans, arrays and objects are decoded first.
 */
export interface Reader {
  readonly lenient: boolean;
  /** Fields outside a body's known list: ignored ('drop', the default) or a 400 ('reject'). */
  readonly unknownFields?: 'drop' | 'reject';
}

export type Json = Record<string, unknown>;

/** The request body as an object, or a 400. */
export function objectBody(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('The request body must be a JSON object.');
  return body as Json;
}

function decode(r: Reader, value: unknown): unknown {
  if (!r.lenient || typeof value !== 'string') return value;
  const t = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return value;
    }
  }
  return value;
}

/** A required (or, with `optional`, possibly absent) field's raw value. */
function field(obj: Json, name: string, path: string, optional: boolean): unknown {
  const value = obj[name];
  if (value === undefined && !optional) throw badRequest(`${path} is required.`, path);
  return value;
}

export function str(r: Reader, obj: Json, name: string, path = name, optional = false): string | undefined {
  const value = field(obj, name, path, optional);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${path} must be a string.`, path);
  return value;
}

/** A non-empty string field. */
export function text(r: Reader, obj: Json, name: string, path = name, optional = false): string | undefined {
  const value = str(r, obj, name, path, optional);
  if (value !== undefined && value.trim() === '') throw badRequest(`${path} must not be empty.`, path);
  return value;
}

export function int(
  r: Reader,
  obj: Json,
  name: string,
  path = name,
  options: { optional?: boolean; min?: number; max?: number } = {},
): number | undefined {
  const value = decode(r, field(obj, name, path, options.optional ?? false));
  if (value === undefined) return undefined;
  return checkInt(value, path, options.min, options.max);
}

/** An integer within [min, max], or a 400. */
export function checkInt(value: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw badRequest(`${path} must be an integer.`, path);
  if (value < min || value > max) throw badRequest(`${path} must be from ${min} to ${max}.`, path);
  return value;
}

export function bool(r: Reader, obj: Json, name: string, path = name, optional = false): boolean | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`${path} must be true or false.`, path);
  return value;
}

export function num(r: Reader, obj: Json, name: string, path = name, optional = false): number | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw badRequest(`${path} must be a number.`, path);
  return value;
}

export function oneOf<T extends string>(
  r: Reader,
  obj: Json,
  name: string,
  allowed: readonly T[],
  path = name,
  optional = false,
): T | undefined {
  const value = str(r, obj, name, path, optional);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw badRequest(`${path} must be one of: ${allowed.join(', ')}.`, path);
  return value as T;
}

export function array(
  r: Reader,
  obj: Json,
  name: string,
  path = name,
  optional = false,
): unknown[] | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw badRequest(`${path} must be an array.`, path);
  return value;
}

/**
 * An object field. `null` and `[]` (how reads show an unset object) return null, meaning "unset".
 */
export function object(
  r: Reader,
  obj: Json,
  name: string,
  path = name,
  optional = false,
): Json | null | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (value === null || (Array.isArray(value) && value.length === 0)) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${path} must be an object.`, path);
  return value as Json;
}

/** With the reader's unknownFields 'reject', a 400 for the first field outside `allowed`; else nothing. */
export function knownFields(r: Reader, obj: Json, allowed: readonly string[], path?: string): void {
  if (r.unknownFields !== 'reject') return;
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) {
      const at = path === undefined ? key : `${path}.${key}`;
      throw badRequest(`${at} is not a known field.`, at);
    }
}

/** Rejects fields outside `allowed` (typos would otherwise be silently ignored). */
export function onlyFields(obj: Json, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) throw badRequest(`${path}.${key} is not a known field.`, `${path}.${key}`);
}

const DEVICES = ['desktop', 'tablet', 'mobile'];
/** The spec shows '=' and '>' in an example; the emulator accepts the usual comparison set. */
export const KEYVALUE_OPERATORS = ['=', '!=', '>', '>=', '<', '<='] as const;
const STRICT: Reader = { lenient: false };
const COUNTRY_CODES = {
  strict: [/^[A-Z]{2}$/, 'a 2-letter uppercase country code (ISO 3166-1 alpha-2)'],
  lenient: [/^[A-Z]{2,3}$/, 'a 2- or 3-letter uppercase country code (ISO 3166-1 alpha-2 or alpha-3)'],
} as const;

function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw badRequest(`${path} must be an array.`, path);
  return value;
}

function codes(values: unknown[], path: string, pattern: RegExp, what: string): string[] {
  return values.map((v, i) => {
    if (typeof v !== 'string' || !pattern.test(v))
      throw badRequest(`${path}[${i}] must be ${what}.`, `${path}[${i}]`);
    return v;
  });
}

/**
 * Validates a creative's targeting object (write shape of the spec) and returns it normalised:
 * a single language string becomes a one-element array. Unknown fields are rejected: the spec lists
 * the write shape in full, so a typo would otherwise silently drop targeting. Country codes are
 * 2- or 3-letter uppercase (the spec documents 2 and its example sends 3); `strict` allows only 2.
 */
export function parseTargeting(t: Json, rules: { strict: boolean } = { strict: false }): Json {
  onlyFields(t, ['devices', 'geo', 'languages', 'keywords', 'keyvalues'], 'targeting');
  const out: Json = {};
  if (t.devices !== undefined) {
    out.devices = arrayAt(t.devices, 'targeting.devices').map((d, i) => {
      if (typeof d !== 'string' || !DEVICES.includes(d))
        throw badRequest(
          `targeting.devices[${i}] must be one of: ${DEVICES.join(', ')}.`,
          `targeting.devices[${i}]`,
        );
      return d;
    });
  }
  const geo = object(STRICT, t, 'geo', 'targeting.geo', true);
  if (geo !== undefined && geo !== null) {
    const type = oneOf(STRICT, geo, 'type', ['include', 'exclude'] as const, 'targeting.geo.type');
    const locations = object(STRICT, geo, 'locations', 'targeting.geo.locations');
    if (locations === null || locations === undefined)
      throw badRequest('targeting.geo.locations must be an object.', 'targeting.geo.locations');
    const loc: Json = {};
    if (locations.countries !== undefined) {
      const path = 'targeting.geo.locations.countries';
      const [pattern, what] = rules.strict ? COUNTRY_CODES.strict : COUNTRY_CODES.lenient;
      loc.countries = codes(arrayAt(locations.countries, path), path, pattern, what);
    }
    out.geo = { type, locations: loc };
  }
  const languages = object(STRICT, t, 'languages', 'targeting.languages', true);
  if (languages !== undefined && languages !== null) {
    const type = oneOf(
      STRICT,
      languages,
      'type',
      ['include', 'exclude'] as const,
      'targeting.languages.type',
    );
    const path = 'targeting.languages.items';
    if (languages.items === undefined) throw badRequest(`${path} is required.`, path);
    // A spec example sends one language as a plain string: accepted as a one-element array.
    const items = typeof languages.items === 'string' ? [languages.items] : arrayAt(languages.items, path);
    out.languages = {
      type,
      items: codes(items, path, /^[a-z]{2}$/, 'a 2-letter lowercase language code (ISO 639-1)'),
    };
  }
  if (t.keywords !== undefined) {
    out.keywords = arrayAt(t.keywords, 'targeting.keywords').map((group, g) =>
      arrayAt(group, `targeting.keywords[${g}]`).map((k, i) => {
        if (typeof k !== 'string' || k.trim() === '')
          throw badRequest(
            `targeting.keywords[${g}][${i}] must be a non-empty string.`,
            `targeting.keywords[${g}][${i}]`,
          );
        return k;
      }),
    );
  }
  if (t.keyvalues !== undefined) {
    out.keyvalues = arrayAt(t.keyvalues, 'targeting.keyvalues').map((group, g) =>
      arrayAt(group, `targeting.keyvalues[${g}]`).map((kv, i) =>
        parseKeyValue(kv, `targeting.keyvalues[${g}][${i}]`),
      ),
    );
  }
  return out;
}

function parseKeyValue(kv: unknown, path: string): Json {
  if (typeof kv !== 'object' || kv === null || Array.isArray(kv))
    throw badRequest(`${path} must be an object.`, path);
  const o = kv as Json;
  onlyFields(o, ['key', 'operator', 'value'], path);
  for (const name of ['key', 'operator', 'value'])
    if (typeof o[name] !== 'string')
      throw badRequest(`${path}.${name} is required and must be a string.`, `${path}.${name}`);
  if ((o.key as string).trim() === '') throw badRequest(`${path}.key must not be empty.`, `${path}.key`);
  if (!(KEYVALUE_OPERATORS as readonly string[]).includes(o.operator as string))
    throw badRequest(`${path}.operator must be one of: ${KEYVALUE_OPERATORS.join(' ')}.`, `${path}.operator`);
  return { key: o.key, operator: o.operator, value: o.value };
}
