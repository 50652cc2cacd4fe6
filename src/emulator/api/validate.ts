// Request body checks, each a typed value or a 400 naming the field by its dotted path; and creative
// targeting.
import { badRequest } from './http.js';

export type Json = Record<string, unknown>;

/** How a body is read: `at` is the path of the object being read, '' at the top. */
export interface Reader {
  /** Decode string-encoded values first (the campaign update, whose spec example sends only strings). */
  readonly lenient: boolean;
  readonly unknownFields: 'drop' | 'reject';
  readonly at: string;
}

function pathOf(r: Reader, name: string): string {
  return r.at === '' ? name : `${r.at}.${name}`;
}

/** The reader of the object at `name` inside the one `r` reads. */
export function within(r: Reader, name: string): Reader {
  return { ...r, at: pathOf(r, name) };
}

export function objectBody(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('The request body must be a JSON object.');
  return body as Json;
}

function decode(value: unknown): unknown {
  if (typeof value !== 'string') return value;
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

/** A field's value (decoded when lenient and `decoded`) and its path; a 400 when required and absent. */
function field(r: Reader, obj: Json, name: string, optional: boolean, decoded = true): [unknown, string] {
  const path = pathOf(r, name);
  const value = obj[name];
  if (value === undefined && !optional) throw badRequest(`${path} is required.`, path);
  return [decoded && r.lenient ? decode(value) : value, path];
}

export function str(r: Reader, obj: Json, name: string, optional = false): string | undefined {
  const [value, path] = field(r, obj, name, optional, false);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${path} must be a string.`, path);
  return value;
}

export function text(r: Reader, obj: Json, name: string, optional = false): string | undefined {
  const value = str(r, obj, name, optional);
  const path = pathOf(r, name);
  if (value !== undefined && value.trim() === '') throw badRequest(`${path} must not be empty.`, path);
  return value;
}

export function int(
  r: Reader,
  obj: Json,
  name: string,
  o: { optional?: boolean; min?: number; max?: number } = {},
): number | undefined {
  const [value, path] = field(r, obj, name, o.optional ?? false);
  return value === undefined ? undefined : checkInt(value, path, o.min, o.max);
}

/** An integer within [min, max], or a 400. */
export function checkInt(value: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw badRequest(`${path} must be an integer.`, path);
  if (value < min || value > max) throw badRequest(`${path} must be from ${min} to ${max}.`, path);
  return value;
}

export function bool(r: Reader, obj: Json, name: string, optional = false): boolean | undefined {
  const [value, path] = field(r, obj, name, optional);
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`${path} must be true or false.`, path);
  return value;
}

export function num(r: Reader, obj: Json, name: string): number {
  const [value, path] = field(r, obj, name, false);
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw badRequest(`${path} must be a number.`, path);
  return value;
}

export function oneOf<T extends string>(r: Reader, obj: Json, name: string, allowed: readonly T[]): T {
  const value = str(r, obj, name) as string;
  const path = pathOf(r, name);
  if (!(allowed as readonly string[]).includes(value))
    throw badRequest(`${path} must be one of: ${allowed.join(', ')}.`, path);
  return value as T;
}

export function array(r: Reader, obj: Json, name: string): unknown[] {
  return arrayAt(...field(r, obj, name, false));
}

/** An object field. `null` and `[]` (how reads show an unset object) return null, meaning "unset". */
export function object(r: Reader, obj: Json, name: string, optional = false): Json | null | undefined {
  const [value, path] = field(r, obj, name, optional);
  if (value === undefined) return undefined;
  if (value === null || (Array.isArray(value) && value.length === 0)) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${path} must be an object.`, path);
  return value as Json;
}

/** With the reader's unknownFields 'reject', a 400 for the first field outside `allowed`; else nothing. */
export function knownFields(r: Reader, obj: Json, allowed: readonly string[]): void {
  const extra = r.unknownFields === 'reject' ? Object.keys(obj).find((k) => !allowed.includes(k)) : undefined;
  if (extra !== undefined) throw badRequest(`${pathOf(r, extra)} is not a known field.`, pathOf(r, extra));
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

/** An array of strings each passing `ok`, else a 400 naming the value as `path[i]` and saying it must be `what`. */
function strings(value: unknown, path: string, ok: (v: string) => boolean, what: string): string[] {
  return arrayAt(value, path).map((v, i) => {
    if (typeof v !== 'string' || !ok(v)) throw badRequest(`${path}[${i}] must be ${what}.`, `${path}[${i}]`);
    return v;
  });
}

/** `{type: include|exclude, <name>: ...}` of geo and languages, or undefined when absent or unset. */
function includeExclude(r: Reader, t: Json, name: string): [Reader, Json, string] | undefined {
  const o = object(r, t, name, true);
  if (o === undefined || o === null) return undefined;
  const inner = within(r, name);
  return [inner, o, oneOf(inner, o, 'type', ['include', 'exclude'])];
}

/** Validates a creative's targeting. Unknown fields are always rejected: the spec lists the write shape in
 * full, so a typo would otherwise silently drop targeting. Country codes may have 3 letters (the spec
 * documents 2, its example sends 3) unless `strict`. */
export function parseTargeting(t: Json, strict: boolean): Json {
  const r: Reader = { lenient: false, unknownFields: 'reject', at: 'targeting' };
  knownFields(r, t, ['devices', 'geo', 'languages', 'keywords', 'keyvalues']);
  const out: Json = {};
  if (t.devices !== undefined)
    out.devices = strings(
      t.devices,
      'targeting.devices',
      (d) => DEVICES.includes(d),
      `one of: ${DEVICES.join(', ')}`,
    );
  const geo = includeExclude(r, t, 'geo');
  if (geo !== undefined) {
    const [g, o, type] = geo;
    const locations = object(g, o, 'locations');
    if (locations === null || locations === undefined)
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
  if (typeof kv !== 'object' || kv === null || Array.isArray(kv))
    throw badRequest(`${path} must be an object.`, path);
  const o = kv as Json;
  knownFields({ lenient: false, unknownFields: 'reject', at: path }, o, ['key', 'operator', 'value']);
  for (const name of ['key', 'operator', 'value'])
    if (typeof o[name] !== 'string')
      throw badRequest(`${path}.${name} is required and must be a string.`, `${path}.${name}`);
  if ((o.key as string).trim() === '') throw badRequest(`${path}.key must not be empty.`, `${path}.key`);
  if (!KEYVALUE_OPERATORS.includes(o.operator as string))
    throw badRequest(`${path}.operator must be one of: ${KEYVALUE_OPERATORS.join(' ')}.`, `${path}.operator`);
  return { key: o.key, operator: o.operator, value: o.value };
}
