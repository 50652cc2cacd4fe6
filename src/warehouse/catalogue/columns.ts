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
