import { PROFILES, resolveProfile } from './profiles.js';
import type { Quirks } from './quirks.js';
import type { EmulatorQuirks, FaultOptions, ProfileName } from './types.js';

/** The fault and quirk flags of `adops emulator`, as parsed (undefined: not given). */
export interface FaultAndQuirkFlags {
  readonly failRate?: number;
  readonly rateLimitRate?: number;
  readonly retryAfter?: number;
  readonly dropRate?: number;
  readonly malformedRate?: number;
  readonly truncateRate?: number;
  readonly latencyMs?: number | [number, number];
  readonly faultPaths?: string;
  readonly faultSeed?: number;
  readonly stormRate?: number;
  readonly stormLength?: number;
  readonly dropMidBodyRate?: number;
  readonly dripRate?: number;
  readonly dripIntervalMs?: number;
  readonly htmlShare?: number;
  readonly profile: ProfileName;
  /** From `--quirks LIST` (parseQuirkList). */
  readonly quirks?: EmulatorQuirks;
  readonly reportParams?: EmulatorQuirks['reportParams'];
  readonly authForm?: EmulatorQuirks['auth'];
  readonly totals?: EmulatorQuirks['totals'];
  readonly reportShape?: EmulatorQuirks['reportShape'];
  readonly strict?: boolean;
  readonly unknownFields?: EmulatorQuirks['unknownFields'];
  readonly clockSkew?: number;
  /** From `--echo-key LIST` (parseEchoPlaces). */
  readonly echoKey?: EmulatorQuirks['echoKey'];
  readonly echoKeyAs?: EmulatorQuirks['echoKeyAs'];
}

/** The faults the flags set (each overrides the profile's). */
export function faultsOfFlags(flags: FaultAndQuirkFlags): FaultOptions {
  const f: FaultOptions = {};
  const set = <K extends keyof FaultOptions>(key: K, value: FaultOptions[K] | undefined) => {
    if (value !== undefined) f[key] = value;
  };
  set('failRate', flags.failRate);
  set('rateLimitRate', flags.rateLimitRate);
  set('retryAfterSeconds', flags.retryAfter);
  set('dropRate', flags.dropRate);
  set('malformedRate', flags.malformedRate);
  set('truncateRate', flags.truncateRate);
  set('latencyMs', flags.latencyMs);
  set(
    'paths',
    flags.faultPaths?.split(',').filter((p) => p !== ''),
  );
  set('seed', flags.faultSeed);
  set('rateLimitStormRate', flags.stormRate);
  set('rateLimitStormLength', flags.stormLength);
  set('dropMidBodyRate', flags.dropMidBodyRate);
  set('dripRate', flags.dripRate);
  set('dripIntervalMs', flags.dripIntervalMs);
  set('htmlShare', flags.htmlShare);
  return f;
}

/** The quirks the flags set (each overrides the profile's): `--quirks` first, the named flags over it. */
export function quirksOfFlags(flags: FaultAndQuirkFlags): EmulatorQuirks {
  const q: EmulatorQuirks = { ...flags.quirks };
  if (flags.reportParams !== undefined) q.reportParams = flags.reportParams;
  if (flags.authForm !== undefined) q.auth = flags.authForm;
  if (flags.totals !== undefined) q.totals = flags.totals;
  if (flags.reportShape !== undefined) q.reportShape = flags.reportShape;
  if (flags.strict === true) q.strict = true;
  if (flags.unknownFields !== undefined) q.unknownFields = flags.unknownFields;
  if (flags.clockSkew !== undefined) q.clockSkewSeconds = flags.clockSkew;
  if (flags.echoKey !== undefined) q.echoKey = flags.echoKey;
  if (flags.echoKeyAs !== undefined) q.echoKeyAs = flags.echoKeyAs;
  return q;
}

const RATES = [
  'failRate',
  'rateLimitRate',
  'dropRate',
  'malformedRate',
  'truncateRate',
  'rateLimitStormRate',
  'dropMidBodyRate',
  'dripRate',
] as const;

/**
 * The faults and quirks of the flags laid over their profile, validated. Throws an Error whose
 * message names the problem (fault rates above 1 name the profile that contributes to them).
 */
export function optionsOfFlags(flags: FaultAndQuirkFlags): {
  faults: FaultOptions;
  quirks: EmulatorQuirks;
  resolved: Quirks;
} {
  const faults = faultsOfFlags(flags);
  const quirks = quirksOfFlags(flags);
  const merged = { ...PROFILES[flags.profile].faults, ...faults };
  const sum = RATES.reduce((s, k) => s + (merged[k] ?? 0), 0);
  if (sum > 1 + 1e-9) {
    const of =
      flags.profile === 'faithful'
        ? 'the fault rates'
        : `the fault rates of --profile ${flags.profile} and the flags`;
    throw new Error(`${of} add up to ${Number(sum.toFixed(6))}; they must add up to at most 1`);
  }
  return { faults, quirks, resolved: resolveProfile(flags.profile, quirks, faults).quirks };
}

/** The quirks that differ from the faithful defaults, for a start line ('none' when faithful). */
export function describeQuirks(q: Quirks): string {
  const defaults: Record<string, unknown> = {
    reportParams: 'any',
    auth: 'any',
    totals: 'normal',
    reportShape: 'nested',
    unknownFields: 'drop',
    clockSkewSeconds: 0,
    echoKeyAs: 'json',
  };
  const on = Object.entries(q).filter(
    ([k, v]) => v !== false && v !== defaults[k] && !(Array.isArray(v) && v.length === 0),
  );
  return on.length === 0 ? 'none' : on.map(([k, v]) => (v === true ? k : `${k}=${String(v)}`)).join(', ');
}
