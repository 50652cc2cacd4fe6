import { FAULT_OPTIONS_SCHEMA } from './faults.js';
import { resolveQuirks, type Quirks } from './quirks.js';
import type { EmulatorQuirks, FaultOptions, ProfileName } from './types.js';

/** A named preset: quirks and faults together. */
export interface Profile {
  readonly quirks: EmulatorQuirks;
  readonly faults: FaultOptions;
}

/** What a PHP-style server does to the spec's open choices (the php and hostile profiles). */
const PHP_QUIRKS: EmulatorQuirks = {
  reportParams: 'brackets',
  auth: 'x-api-key',
  stringValues: true,
  emptyAsArray: true,
  sortKeys: true,
};

/** The profiles, by name; docs/emulator.md describes each. */
export const PROFILES: Readonly<Record<ProfileName, Profile>> = {
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

/** The profile names, for flags and error messages. */
export const PROFILE_NAMES = Object.keys(PROFILES) as ProfileName[];

/** True when `name` is a profile. */
export function isProfileName(name: string): name is ProfileName {
  return Object.hasOwn(PROFILES, name);
}

/**
 * The quirks and faults a start gets: the profile's, each field overridden by an explicitly given
 * one. Validates both (throws naming the unknown profile or the bad field).
 */
export function resolveProfile(
  profile: ProfileName = 'faithful',
  quirks: EmulatorQuirks = {},
  faults: FaultOptions = {},
): { quirks: Quirks; faults: FaultOptions } {
  if (!isProfileName(profile))
    throw new Error(`unknown profile "${String(profile)}": use one of ${PROFILE_NAMES.join(', ')}`);
  const preset = PROFILES[profile];
  const merged = { ...preset.faults, ...defined(faults) };
  FAULT_OPTIONS_SCHEMA.parse(merged);
  return { quirks: resolveQuirks({ ...preset.quirks, ...defined(quirks) }), faults: merged };
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
