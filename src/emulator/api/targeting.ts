import { badRequest } from './errors.js';
import { object, oneOf, onlyFields, type Json, type Reader } from './validate.js';

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
