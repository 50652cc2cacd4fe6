import { z } from 'zod';
import type { EchoForm, EchoPlace, EmulatorQuirks } from './types.js';

/** Every place the echoKey quirk can put the key. */
export const ECHO_PLACES: readonly EchoPlace[] = ['body', 'error', 'html', 'header'];

/** Every encoding the echoKey quirk can write the key in. */
export const ECHO_FORMS: readonly EchoForm[] = [
  'json',
  'json-slash',
  'percent',
  'percent-lower',
  'unicode',
  'unicode-lower',
  'mixed',
];

/** Every quirk filled in: what the server consults per request. */
export type Quirks = Readonly<Required<EmulatorQuirks>>;

/** The faithful defaults: every reading of the spec accepted, today's encodings, no unstated rules. */
export const FAITHFUL_QUIRKS: Quirks = Object.freeze({
  reportParams: 'any',
  auth: 'any',
  stringValues: false,
  emptyAsArray: false,
  totals: 'normal',
  sortKeys: false,
  htmlErrors: false,
  gzip: false,
  rateLimitHeaders: false,
  strict: false,
  unknownFields: 'drop',
  clockSkewSeconds: 0,
  reportShape: 'nested',
  echoKey: [],
  echoKeyAs: 'json',
});

/** The accepted shape of EmulatorQuirks (options, setQuirks and PUT /_control/quirks). */
export const QUIRKS_SCHEMA = z
  .object({
    reportParams: z.enum(['any', 'repeat', 'brackets', 'comma', 'json-body']).optional(),
    auth: z.enum(['any', 'bearer', 'x-api-key']).optional(),
    stringValues: z.boolean().optional(),
    emptyAsArray: z.boolean().optional(),
    totals: z.enum(['normal', 'missing', 'empty-array']).optional(),
    sortKeys: z.boolean().optional(),
    htmlErrors: z.boolean().optional(),
    gzip: z.boolean().optional(),
    rateLimitHeaders: z.boolean().optional(),
    strict: z.boolean().optional(),
    unknownFields: z.enum(['drop', 'reject']).optional(),
    // A day either way is far beyond any real skew and keeps the Date header a valid HTTP date.
    clockSkewSeconds: z.number().int().min(-86_400).max(86_400).optional(),
    reportShape: z.enum(['nested', 'rows']).optional(),
    echoKey: z.array(z.enum(['body', 'error', 'html', 'header'])).optional(),
    echoKeyAs: z
      .enum(['json', 'json-slash', 'percent', 'percent-lower', 'unicode', 'unicode-lower', 'mixed'])
      .optional(),
  })
  .strict();

/** Validates quirks (throws a ZodError naming the field) and fills in the faithful defaults. */
export function resolveQuirks(q: EmulatorQuirks = {}): Quirks {
  const given = QUIRKS_SCHEMA.parse(q);
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  return Object.freeze({ ...FAITHFUL_QUIRKS, ...defined });
}

/** The boolean quirks by their `--quirks` names (kebab-case). */
export const BOOLEAN_QUIRKS = {
  'string-values': 'stringValues',
  'empty-as-array': 'emptyAsArray',
  'sort-keys': 'sortKeys',
  'html-errors': 'htmlErrors',
  gzip: 'gzip',
  'rate-limit-headers': 'rateLimitHeaders',
  strict: 'strict',
} as const satisfies Record<string, keyof EmulatorQuirks>;

/**
 * Parses a `--quirks` list such as 'string-values,sort-keys' into quirks; a `no-` prefix turns one
 * off (to take it away from a profile). Throws naming the unknown name and listing the known ones.
 */
export function parseQuirkList(text: string): EmulatorQuirks {
  const out: Record<string, boolean> = {};
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const on = !item.startsWith('no-');
    const name = on ? item : item.slice(3);
    const key = (BOOLEAN_QUIRKS as Record<string, string>)[name];
    if (key === undefined)
      throw new Error(
        `unknown quirk "${item}": use any of ${Object.keys(BOOLEAN_QUIRKS).join(', ')} (a "no-" prefix turns one off)`,
      );
    out[key] = on;
  }
  return out;
}

/**
 * Parses an `--echo-key` list such as 'body,header' (or 'all') into echoKey places. Throws naming
 * the unknown place and listing the known ones.
 */
export function parseEchoPlaces(text: string): EchoPlace[] {
  const places: EchoPlace[] = [];
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    if (item === 'all') return [...ECHO_PLACES];
    if (!(ECHO_PLACES as readonly string[]).includes(item))
      throw new Error(`unknown echo place "${item}": use any of ${ECHO_PLACES.join(', ')}, or all`);
    if (!places.includes(item as EchoPlace)) places.push(item as EchoPlace);
  }
  return places;
}
