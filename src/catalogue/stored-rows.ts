// The catalogue as the warehouse stores it; src/catalogue maps the API's objects onto these shapes.

export type JsonObject = Record<string, unknown>;

export type EntityKind = 'campaign' | 'creative';

/** A field not readable as its column's type (stored NULL), or (`repaired`) text stored repaired. */
export interface FieldProblem {
  readonly entity: EntityKind;
  readonly id: number | null; // The entity's id, or null when the id itself is what could not be read.
  /** Dotted path of the field, e.g. `pricing.value`, `zone_ids[2]`, `(object)` for a non-object. */
  readonly field: string;
  readonly expected: string;
  readonly value: string; // A short excerpt of the value found and its JSON type, e.g. `"high" (string)`.
  readonly repaired?: true; // The value was text with a NUL or an unpaired surrogate, stored repaired.
}

/** Problems of one sync as logged and stored: all (skipped entities, whose id is unreadable, included). */
export interface ProblemSummary {
  readonly count: number;
  readonly skipped: number;
  /** Text fields stored repaired (absent in runs recorded before repairs were counted). */
  readonly repaired?: number;
  /** Count per `entity field` (e.g. `campaign pricing.value`), largest first. */
  readonly byField: Readonly<Record<string, number>>;
  readonly examples: readonly FieldProblem[];
}

/** Counts of one catalogue write: entities written, newly soft-deleted, and soft-deleted ones back. */
export interface WriteResult {
  readonly campaigns: number;
  readonly creatives: number;
  readonly deleted: number;
  readonly revived: number;
}

/** Counts of one sync: field problems, entities skipped, this try's requests, pages resumed. */
export interface EntitySyncResult extends WriteResult {
  readonly problems: number;
  readonly skipped: number;
  readonly requests: number;
  readonly resumedPages: number;
}

/** The TypeScript type of each Postgres type an entity column has (in jsonb_to_recordset). */
interface PgTypes {
  bigint: number;
  integer: number;
  smallint: number;
  numeric: number;
  text: string;
  boolean: boolean;
  timestamptz: string;
  jsonb: JsonObject | unknown[];
}

/** A typed column of an entity table: its name and its Postgres type in jsonb_to_recordset. */
export type Column = { readonly name: string; readonly type: keyof PgTypes };

/** A row keyed by column name: NULL where a field could not be read, except its `keys`. */
type RowOf<T extends Record<string, keyof PgTypes>, Keys extends keyof T> = {
  readonly [K in keyof T]: K extends Keys ? PgTypes[T[K]] : PgTypes[T[K]] | null;
} & { readonly raw: JsonObject };

/** Columns of `campaigns` the sync writes, in table order (synced_at, deleted_at are set in SQL). */
const CAMPAIGN = {
  campaign_id: 'bigint',
  name: 'text',
  ad_format: 'text',
  advertiser_id: 'bigint',
  conversion_tracker_id: 'bigint',
  folder_id: 'bigint',
  account_id_created: 'bigint',
  account_id_modified: 'bigint',
  created: 'timestamptz',
  modified: 'timestamptz',
  is_active: 'boolean',
  is_archived: 'boolean',
  notes: 'text',
  tier: 'smallint',
  weight: 'smallint',
  delivery_start: 'timestamptz',
  delivery_end: 'timestamptz',
  event_ad_requests: 'bigint',
  event_clicks: 'bigint',
  event_filled_impressions: 'bigint',
  event_impressions: 'bigint',
  event_measurable_impressions: 'bigint',
  event_viewable_impressions: 'bigint',
  pricing_model: 'text',
  pricing_value: 'numeric',
  pacing_event: 'text',
  pacing_period: 'text',
  pacing_speed: 'text',
  pacing_value: 'bigint',
  targeting: 'jsonb',
  raw: 'jsonb',
} as const;

const CREATIVE = {
  creative_id: 'bigint',
  campaign_id: 'bigint',
  name: 'text',
  ad_type: 'text',
  is_active: 'boolean',
  account_id_created: 'bigint',
  account_id_modified: 'bigint',
  created: 'timestamptz',
  modified: 'timestamptz',
  weight: 'integer',
  delivery_start: 'timestamptz',
  delivery_end: 'timestamptz',
  thumbnail_color: 'text',
  thumbnail_filehash: 'text',
  data_width: 'integer',
  data_height: 'integer',
  data_filehash: 'text',
  data_landing_page: 'text',
  data: 'jsonb',
  targeting: 'jsonb',
  raw: 'jsonb',
} as const;

/** One row of `campaigns` and of `creatives` (times are ISO instants). */
export type CampaignRow = RowOf<typeof CAMPAIGN, 'campaign_id'>;
export type CreativeRow = RowOf<typeof CREATIVE, 'creative_id' | 'campaign_id'>;

/** A campaign mapped for the warehouse: its row and its zone assignments. */
export type MappedCampaign = { readonly row: CampaignRow; readonly zoneIds: readonly number[] };

/** Everything one sync read, validated and typed, ready for the one-transaction write. */
export interface Catalogue {
  readonly campaigns: readonly MappedCampaign[];
  readonly creatives: readonly CreativeRow[];
}

const columns = (types: Record<string, keyof PgTypes>): Column[] =>
  Object.entries(types).map(([name, type]) => ({ name, type }));
export const CAMPAIGN_COLUMNS: readonly Column[] = columns(CAMPAIGN);
export const CREATIVE_COLUMNS: readonly Column[] = columns(CREATIVE);

// Postgres stores no NUL and no unpaired surrogate, and one bad name must not fail a sync: catalogue text
// is stored repaired (report rows are refused: there a value is a key). \p{Cs} in a `u` regex: unpaired only.
// eslint-disable-next-line no-control-regex -- NUL is exactly what is matched
const UNSTORABLE = /\u0000|\p{Cs}/u;
// eslint-disable-next-line no-control-regex -- NUL is exactly what is matched
const UNSTORABLE_ALL = /\u0000|\p{Cs}/gu;

/** `text` with each NUL removed and each unpaired surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, (c) => (c === '\u0000' ? '' : '\ufffd')) : text;
}

/** `value` with every string and key storable; `repaired` is told each change (path, value as sent). */
export function storableJson(
  value: unknown,
  repaired: (path: string, original: unknown) => void = () => undefined,
  path = '',
): unknown {
  if (typeof value === 'string') {
    const text = storableText(value);
    if (text !== value) repaired(path, value);
    return text;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const stored = storableJson(item, repaired, `${path}[${i}]`);
      if (stored !== item) (out ??= [...value])[i] = stored;
    });
    return out ?? value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const storedKey = storableText(key);
    const at = path === '' ? storedKey : `${path}.${storedKey}`;
    if (storedKey !== key) {
      repaired(at, key);
      changed = true;
    }
    const stored = storableJson(item, repaired, at);
    if (stored !== item) changed = true;
    // A colliding key keeps the first value; defined, not assigned: a `__proto__` key stays a key.
    if (!Object.hasOwn(out, storedKey))
      Object.defineProperty(out, storedKey, {
        value: stored,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return changed ? out : value;
}
