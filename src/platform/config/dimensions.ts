// The report dimensions and counters of the API spec, and the Postgres column type of each dimension.
/** The report dimensions the API supports (spec: "Supported dimensions"), in the spec's order. */
export const DIMENSIONS = [
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

export type Dimension = (typeof DIMENSIONS)[number];

/** Postgres type of a dimension column: typed where the value's form is certain, text otherwise. */
export type DimensionType = 'date' | 'bigint' | 'smallint' | 'text';

const DIMENSION_SET: ReadonlySet<string> = new Set(DIMENSIONS);

export function isDimension(name: string): name is Dimension {
  return DIMENSION_SET.has(name);
}

export function dimensionType(dimension: Dimension): DimensionType {
  if (dimension === 'day') return 'date';
  if (dimension === 'tier' || dimension === 'hour') return 'smallint';
  if (dimension.endsWith('_id')) return 'bigint';
  return 'text';
}

/** The five report counters, in the fixed order used by rows, tables and COPY. */
export const COUNTERS = [
  'ad_requests',
  'filled_impressions',
  'impressions',
  'measurable_impressions',
  'viewable_impressions',
] as const;

export type CounterName = (typeof COUNTERS)[number];
