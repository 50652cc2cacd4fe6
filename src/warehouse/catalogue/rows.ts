// The catalogue as the warehouse stores it: the typed rows of campaigns and creatives, and the
// field problems a sync records. The warehouse owns these shapes; src/entities maps the API's
// objects onto them.

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
