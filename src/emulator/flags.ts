// How a start's options are chosen: the profiles, `adops emulator` flags over them, files they name.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { EchoPlace, EmulatorKey, EmulatorQuirks, FaultOptions, ProfileName, Quirks } from './options.js';
import {
  ECHO_PLACES,
  FAULT_OPTIONS_SCHEMA,
  FAITHFUL_QUIRKS,
  FAULT_RATES,
  isOneOf,
  isRecord,
  KEY_SCHEMA,
  overlay,
  splitList,
  resolveQuirks,
  PROFILE_NAMES,
} from './options.js';

const FAULT_FLAGS = {
  failRate: 'failRate',
  rateLimitRate: 'rateLimitRate',
  retryAfter: 'retryAfterSeconds',
  dropRate: 'dropRate',
  malformedRate: 'malformedRate',
  truncateRate: 'truncateRate',
  latencyMs: 'latencyMs',
  faultSeed: 'seed',
  stormRate: 'rateLimitStormRate',
  stormLength: 'rateLimitStormLength',
  dropMidBodyRate: 'dropMidBodyRate',
  dripRate: 'dripRate',
  dripIntervalMs: 'dripIntervalMs',
  htmlShare: 'htmlShare',
} as const satisfies Record<string, keyof FaultOptions>;

/** Each quirk flag and the quirk it sets (`--strict` apart: it only turns strict on). */
const QUIRK_FLAGS = {
  reportParams: 'reportParams',
  authForm: 'auth',
  totals: 'totals',
  reportShape: 'reportShape',
  unknownFields: 'unknownFields',
  clockSkew: 'clockSkewSeconds',
  echoKey: 'echoKey',
  echoKeyAs: 'echoKeyAs',
  maxDaysPerRequest: 'maxDaysPerRequest',
  msPer1000Rows: 'msPer1000Rows',
} as const satisfies Record<string, keyof EmulatorQuirks>;

export type FaultAndQuirkFlags = {
  readonly [F in keyof typeof FAULT_FLAGS]?: FaultOptions[(typeof FAULT_FLAGS)[F]];
} & { readonly [F in keyof typeof QUIRK_FLAGS]?: EmulatorQuirks[(typeof QUIRK_FLAGS)[F]] } & {
  readonly profile: ProfileName;
  /** From `--quirks LIST` (parseQuirkList); the named quirk flags go over it. */
  readonly quirks?: EmulatorQuirks;
  readonly faultPaths?: string;
  readonly strict?: boolean;
};

function copyGiven(from: Readonly<Record<string, unknown>>, map: Record<string, string>, to: object): void {
  for (const [flag, option] of Object.entries(map))
    if (from[flag] !== undefined) Object.assign(to, { [option]: from[flag] });
}

/** The faults and quirks of the flags laid over their profile, validated (an Error names the problem). */
export function optionsOfFlags(flags: FaultAndQuirkFlags) {
  const faults: FaultOptions = {};
  copyGiven(flags, FAULT_FLAGS, faults);
  const paths = flags.faultPaths?.split(',').filter((p) => p !== '');
  if (paths !== undefined) faults.paths = paths;
  const quirks: EmulatorQuirks = { ...flags.quirks };
  copyGiven(flags, QUIRK_FLAGS, quirks);
  if (flags.strict === true) quirks.strict = true;
  const merged = { ...PROFILES[flags.profile].faults, ...faults };
  const sum = FAULT_RATES.reduce((s, k) => s + (merged[k] ?? 0), 0);
  if (sum > 1 + 1e-9) {
    const of =
      flags.profile === 'faithful'
        ? 'the fault rates'
        : `the fault rates of --profile ${flags.profile} and the flags`;
    throw new Error(`${of} add up to ${Number(sum.toFixed(6))}; they must add up to at most 1`);
  }
  return { faults, quirks, resolved: resolveProfile(flags.profile, quirks, faults).quirks };
}

export function describeQuirks(q: Quirks): string {
  const faithful = new Map<string, unknown>(Object.entries(FAITHFUL_QUIRKS));
  const on = Object.entries(q).filter(
    ([k, v]) => v !== false && v !== faithful.get(k) && !(Array.isArray(v) && v.length === 0),
  );
  return on.length === 0 ? 'none' : on.map(([k, v]) => (v === true ? k : `${k}=${String(v)}`)).join(', ');
}

/** What a PHP-style server does to the spec's open choices (the php and hostile profiles). */
const PHP_QUIRKS: EmulatorQuirks = {
  reportParams: 'brackets',
  auth: 'x-api-key',
  stringValues: true,
  emptyAsArray: true,
  sortKeys: true,
};

export const PROFILES: Readonly<Record<ProfileName, { quirks: EmulatorQuirks; faults: FaultOptions }>> = {
  faithful: { quirks: {}, faults: {} },
  php: { quirks: PHP_QUIRKS, faults: {} },
  hostile: {
    quirks: { ...PHP_QUIRKS, htmlErrors: true },
    // 25% 5xx (two in five of them HTML 502 pages), 5% 429, 3% dropped connections (one in three mid-body).
    faults: {
      failRate: 0.25,
      htmlShare: 0.4,
      rateLimitRate: 0.05,
      retryAfterSeconds: 1,
      dropRate: 0.02,
      dropMidBodyRate: 0.01,
    },
  },
  strict: { quirks: { strict: true, unknownFields: 'reject' }, faults: {} },
};

export function resolveProfile(
  profile: ProfileName = 'faithful',
  quirks: EmulatorQuirks = {},
  faults: FaultOptions = {},
): { quirks: Quirks; faults: FaultOptions } {
  if (!Object.hasOwn(PROFILES, profile))
    throw new Error(`unknown profile "${String(profile)}": use one of ${PROFILE_NAMES.join(', ')}`);
  const preset = PROFILES[profile];
  const merged = overlay(preset.faults, faults);
  FAULT_OPTIONS_SCHEMA.parse(merged);
  return { quirks: resolveQuirks(overlay(preset.quirks, quirks)), faults: merged };
}

const BOOLEAN_QUIRKS = new Map<string, keyof EmulatorQuirks>([
  ['string-values', 'stringValues'],
  ['empty-as-array', 'emptyAsArray'],
  ['sort-keys', 'sortKeys'],
  ['html-errors', 'htmlErrors'],
  ['gzip', 'gzip'],
  ['rate-limit-headers', 'rateLimitHeaders'],
  ['strict', 'strict'],
]);

export function parseQuirkList(text: string): EmulatorQuirks {
  const out: Record<string, boolean> = {};
  for (const item of splitList(text)) {
    const on = !item.startsWith('no-');
    const name = on ? item : item.slice(3);
    const key = BOOLEAN_QUIRKS.get(name);
    if (key === undefined)
      throw new Error(
        `unknown quirk "${item}": use any of ${[...BOOLEAN_QUIRKS.keys()].join(', ')} (a "no-" prefix turns one off)`,
      );
    out[key] = on;
  }
  return out;
}

export function parseEchoPlaces(text: string): EchoPlace[] {
  const places: EchoPlace[] = [];
  for (const item of splitList(text)) {
    if (item === 'all') return [...ECHO_PLACES];
    if (!isOneOf(ECHO_PLACES, item))
      throw new Error(`unknown echo place "${item}": use any of ${ECHO_PLACES.join(', ')}, or all`);
    if (!places.includes(item)) places.push(item);
  }
  return places;
}

export function parseLatency(text: string): number | [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (m === null) throw new Error(`latency "${text}" must be milliseconds: A or A-B, e.g. 50 or 20-200`);
  const a = Number(m[1]);
  if (m[2] === undefined) return a;
  const b = Number(m[2]);
  if (b < a) throw new Error(`latency "${text}": B must not be below A`);
  return [a, b];
}

export function parseKeysFile(text: string, path: string): EmulatorKey[] {
  const expected =
    'expected [{"key": "...", "scopes": ["campaigns", "creatives", "reports"], "methods": ["GET"], "ips": ["127.0.0.1"]}]';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not valid JSON; ${expected}`, { cause: error });
  }
  // Both shapes share one schema, so an error can name the exact entry and field.
  const parsed = z.array(KEY_SCHEMA).safeParse(isRecord(json) ? json.keys : json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}; ${expected}`);
  }
  return parsed.data;
}

export function loadKeysFile(path: string): EmulatorKey[] {
  return parseKeysFile(readFileSync(path, 'utf8'), path);
}
