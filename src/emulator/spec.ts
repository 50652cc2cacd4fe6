/**
 * Names the emulator takes straight from the spec, deliberately not imported from the client's
 * config/report modules: if the client's copy were wrong, a shared list would make the emulator
 * agree with the bug instead of exposing it. A unit test compares the two copies.
 */

/** The spec's "Supported dimensions", in its order. */
export const SPEC_DIMENSIONS = [
  'year',
  'month',
  'day',
  'hour',
  'weekday',
  'campaign_id',
  'creative_id',
  'zone_id',
  'ad_format',
  'ad_size',
  'landing_url',
  'tier',
  'country',
  'region',
  'city',
  'language',
  'domain',
  'device',
  'browser',
] as const;

export type SpecDimension = (typeof SPEC_DIMENSIONS)[number];

const NAMES: ReadonlySet<string> = new Set(SPEC_DIMENSIONS);

/** True when `name` is one of the spec's dimensions. */
export function isSpecDimension(name: string): name is SpecDimension {
  return NAMES.has(name);
}

/** The spec's report counters, in the order the emulator writes them in every leaf and in totals. */
export const SPEC_COUNTERS = [
  'ad_requests',
  'filled_impressions',
  'impressions',
  'measurable_impressions',
  'viewable_impressions',
] as const;
