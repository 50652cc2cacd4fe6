// The catalogue as the warehouse stores it: the typed rows of campaigns and creatives, the field
// problems a sync records, the columns each entity table is written by, and text made storable.
// The warehouse owns these shapes; src/catalogue maps the API's objects onto them.

/** A JSON object as parsed from an API response. */
export type JsonObject = Record<string, unknown>;

/** Which catalogue entity a value belongs to. */
export type EntityKind = 'campaign' | 'creative';

/**
 * A field of a campaign or creative that could not be read as its column's type. The entity is
 * still stored (that column NULL, `raw` intact), unless the field is its id: then it is skipped.
 * Or (`repaired`) text Postgres cannot hold, stored repaired in its column and in `raw` alike.
 */
export interface FieldProblem {
  readonly entity: EntityKind;
  /** The entity's id, or null when the id itself is what could not be read. */
  readonly id: number | null;
  /** Dotted path of the field, e.g. `pricing.value`, `zone_ids[2]`, `(object)` for a non-object. */
  readonly field: string;
  /** What was expected, e.g. `an integer`. */
  readonly expected: string;
  /** A short excerpt of the value found and its JSON type, e.g. `"high" (string)`. */
  readonly value: string;
  /** The value was text with a NUL or an unpaired surrogate, stored repaired (storable.ts). */
  readonly repaired?: true;
}

/** Problems of one sync, aggregated by entity and field, as logged and stored. */
export interface ProblemSummary {
  /** Every problem met, the entities skipped for an unreadable id included. */
  readonly count: number;
  /** Entities skipped because their id could not be read. */
  readonly skipped: number;
  /** Text fields stored repaired (absent in runs recorded before repairs were counted). */
  readonly repaired?: number;
  /** Count per `entity field` (e.g. `campaign pricing.value`), largest first. */
  readonly byField: Readonly<Record<string, number>>;
  /** The first KEPT_PROBLEMS problems, in the order met. */
  readonly examples: readonly FieldProblem[];
}

/** One row of `campaigns`, keyed by column name (see CAMPAIGN_COLUMNS); times are ISO instants. */
export interface CampaignRow {
  readonly campaign_id: number;
  readonly name: string | null;
  readonly ad_format: string | null;
  readonly advertiser_id: number | null;
  readonly conversion_tracker_id: number | null;
  readonly folder_id: number | null;
  readonly account_id_created: number | null;
  readonly account_id_modified: number | null;
  readonly created: string | null;
  readonly modified: string | null;
  readonly is_active: boolean | null;
  readonly is_archived: boolean | null;
  readonly notes: string | null;
  readonly tier: number | null;
  readonly weight: number | null;
  readonly delivery_start: string | null;
  readonly delivery_end: string | null;
  readonly event_ad_requests: number | null;
  readonly event_clicks: number | null;
  readonly event_filled_impressions: number | null;
  readonly event_impressions: number | null;
  readonly event_measurable_impressions: number | null;
  readonly event_viewable_impressions: number | null;
  readonly pricing_model: string | null;
  readonly pricing_value: number | null;
  readonly pacing_event: string | null;
  readonly pacing_period: string | null;
  readonly pacing_speed: string | null;
  readonly pacing_value: number | null;
  readonly targeting: JsonObject | unknown[] | null;
  readonly raw: JsonObject;
}

/** A campaign mapped for the warehouse: its row and its zone assignments. */
export interface MappedCampaign {
  readonly row: CampaignRow;
  readonly zoneIds: readonly number[];
}

/** One row of `creatives`, keyed by column name (see CREATIVE_COLUMNS); times are ISO instants. */
export interface CreativeRow {
  readonly creative_id: number;
  readonly campaign_id: number;
  readonly name: string | null;
  readonly ad_type: string | null;
  readonly is_active: boolean | null;
  readonly account_id_created: number | null;
  readonly account_id_modified: number | null;
  readonly created: string | null;
  readonly modified: string | null;
  readonly weight: number | null;
  readonly delivery_start: string | null;
  readonly delivery_end: string | null;
  readonly thumbnail_color: string | null;
  readonly thumbnail_filehash: string | null;
  readonly data_width: number | null;
  readonly data_height: number | null;
  readonly data_filehash: string | null;
  readonly data_landing_page: string | null;
  readonly data: JsonObject | null;
  readonly targeting: JsonObject | unknown[] | null;
  readonly raw: JsonObject;
}

/** Everything one sync read, validated and typed, ready for the one-transaction write. */
export interface Catalogue {
  readonly campaigns: readonly MappedCampaign[];
  readonly creatives: readonly CreativeRow[];
}

/** A typed column of an entity table: its name and its Postgres type in jsonb_to_recordset. */
export interface Column {
  readonly name: string;
  readonly type: 'bigint' | 'integer' | 'smallint' | 'numeric' | 'text' | 'boolean' | 'timestamptz' | 'jsonb';
}

const col = (name: string, type: Column['type']): Column => ({ name, type });

/** Columns of `campaigns` the sync writes, in table order (synced_at, deleted_at are set in SQL). */
export const CAMPAIGN_COLUMNS: readonly Column[] = [
  col('campaign_id', 'bigint'),
  col('name', 'text'),
  col('ad_format', 'text'),
  col('advertiser_id', 'bigint'),
  col('conversion_tracker_id', 'bigint'),
  col('folder_id', 'bigint'),
  col('account_id_created', 'bigint'),
  col('account_id_modified', 'bigint'),
  col('created', 'timestamptz'),
  col('modified', 'timestamptz'),
  col('is_active', 'boolean'),
  col('is_archived', 'boolean'),
  col('notes', 'text'),
  col('tier', 'smallint'),
  col('weight', 'smallint'),
  col('delivery_start', 'timestamptz'),
  col('delivery_end', 'timestamptz'),
  col('event_ad_requests', 'bigint'),
  col('event_clicks', 'bigint'),
  col('event_filled_impressions', 'bigint'),
  col('event_impressions', 'bigint'),
  col('event_measurable_impressions', 'bigint'),
  col('event_viewable_impressions', 'bigint'),
  col('pricing_model', 'text'),
  col('pricing_value', 'numeric'),
  col('pacing_event', 'text'),
  col('pacing_period', 'text'),
  col('pacing_speed', 'text'),
  col('pacing_value', 'bigint'),
  col('targeting', 'jsonb'),
  col('raw', 'jsonb'),
];

/** Columns of `creatives` the sync writes, in table order. */
export const CREATIVE_COLUMNS: readonly Column[] = [
  col('creative_id', 'bigint'),
  col('campaign_id', 'bigint'),
  col('name', 'text'),
  col('ad_type', 'text'),
  col('is_active', 'boolean'),
  col('account_id_created', 'bigint'),
  col('account_id_modified', 'bigint'),
  col('created', 'timestamptz'),
  col('modified', 'timestamptz'),
  col('weight', 'integer'),
  col('delivery_start', 'timestamptz'),
  col('delivery_end', 'timestamptz'),
  col('thumbnail_color', 'text'),
  col('thumbnail_filehash', 'text'),
  col('data_width', 'integer'),
  col('data_height', 'integer'),
  col('data_filehash', 'text'),
  col('data_landing_page', 'text'),
  col('data', 'jsonb'),
  col('targeting', 'jsonb'),
  col('raw', 'jsonb'),
];

// Catalogue text as Postgres can hold it. Neither text nor jsonb can store a NUL (jsonb refuses
// `\u0000`: "unsupported Unicode escape sequence"), and an unpaired UTF-16 surrogate has no UTF-8
// form (jsonb refuses its escape; a text parameter silently becomes U+FFFD). An entity's name or
// notes holding one must not fail the whole sync, so such text is stored repaired: NULs removed,
// each unpaired surrogate replaced by U+FFFD, the same in the typed columns and in the jsonb.
// Report rows are refused instead (copy-encode.ts): there a value is a key. Pure.
// In a `u` regex, \p{Cs} matches only unpaired surrogates.
// eslint-disable-next-line no-control-regex -- NUL is exactly what is matched
const UNSTORABLE = /\u0000|\p{Cs}/u;
// eslint-disable-next-line no-control-regex -- NUL is exactly what is matched
const UNSTORABLE_ALL = /\u0000|\p{Cs}/gu;

/** `text` with each NUL removed and each unpaired surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, (c) => (c === '\u0000' ? '' : '\ufffd')) : text;
}

/**
 * `value` (parsed JSON) with every string and object key storable. `repaired(path, original)` is
 * told each string or key that changed, by its path as stored (`name`, `data.landing_page`,
 * `zone_ids[2]`) and its value as sent. Returns `value` itself when nothing changed.
 */
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
    // A key that becomes one already there keeps the first value sent: nothing is overwritten.
    // Defined, not assigned: a `__proto__` key from JSON.parse stays a key.
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
