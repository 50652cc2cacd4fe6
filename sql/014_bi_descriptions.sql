-- Descriptions of the fixed objects BI tools read (Metabase and Superset show Postgres comments as
-- column descriptions): what each is, its unit, and how to aggregate it. The per-report objects
-- (report_<name>, bi_<name>, bi_<name>_daily) are described by src/warehouse/descriptions.ts, since
-- code creates them after the migrations. Comments already given by earlier files are kept.

-- report_totals: the API's own totals, the reference a dashboard's sums can be checked against.
COMMENT ON TABLE report_totals IS 'The API''s totals of each report and period as returned (one row per account, report and period): what the rows of report_<name> for that period add up to. Sum the counters over periods; reports of one grain must agree (adops status).';
COMMENT ON COLUMN report_totals.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account).';
COMMENT ON COLUMN report_totals.report IS 'The report (job definition name); its rows are in report_<report>.';
COMMENT ON COLUMN report_totals.period_start IS 'First day of the period (date, inclusive).';
COMMENT ON COLUMN report_totals.period_end IS 'Last day of the period (date, inclusive).';
COMMENT ON COLUMN report_totals.ad_requests IS 'Ad requests received in the period (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN report_totals.filled_impressions IS 'Ad requests answered with an ad (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN report_totals.impressions IS 'Ads rendered (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN report_totals.measurable_impressions IS 'Impressions whose viewability could be measured (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN report_totals.viewable_impressions IS 'Measurable impressions seen by the user (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN report_totals.load_id IS 'The report_loads row of the pull these totals came with.';
COMMENT ON COLUMN report_totals.loaded_at IS 'When these totals were loaded (timestamptz); a later re-pull may restate them inside lookback_days.';
COMMENT ON COLUMN report_totals.retention_dropped_at IS 'When retention dropped the period''s rows (totals kept for history); null while the rows are there.';

-- report_loads: operations, but BI users ask "how fresh is this".
COMMENT ON TABLE report_loads IS 'One row per pull attempt that reached the loader: report, account, period, status (loaded, failed, superseded), rows, reconciliation, HTTP attempts, bytes, durations, error. Not traffic: never sum it into a dashboard''s numbers.';
COMMENT ON COLUMN report_loads.report IS 'The report (job definition name).';
COMMENT ON COLUMN report_loads.period_start IS 'First day of the pulled period (date, inclusive).';
COMMENT ON COLUMN report_loads.period_end IS 'Last day of the pulled period (date, inclusive).';
COMMENT ON COLUMN report_loads.status IS 'loaded: its rows are current; superseded: a later load replaced them; failed: the pull failed (earlier rows, if any, stay).';
COMMENT ON COLUMN report_loads.rows IS 'Rows loaded (count); null for a failed attempt.';
COMMENT ON COLUMN report_loads.reconciled IS 'True when the rows add up to the API''s totals.';
COMMENT ON COLUMN report_loads.recorded_at IS 'When the attempt was recorded (timestamptz).';
COMMENT ON TABLE report_raw IS 'Raw API responses (gzip) kept for replay and audit, for a configured number of days. Not for BI: the read-only BI role cannot read it.';

-- dim_date: the calendar to join for weeks, months, quarters.
COMMENT ON COLUMN dim_date.date IS 'The day (date); join bi_<name>.day = dim_date.date.';
COMMENT ON COLUMN dim_date.year IS 'Calendar year (smallint).';
COMMENT ON COLUMN dim_date.quarter IS 'Calendar quarter, 1 to 4.';
COMMENT ON COLUMN dim_date.month IS 'Calendar month, 1 to 12.';
COMMENT ON COLUMN dim_date.month_name IS 'English month name, e.g. January.';
COMMENT ON COLUMN dim_date.day_of_month IS 'Day of the month, 1 to 31.';
COMMENT ON COLUMN dim_date.iso_week IS 'ISO 8601 week number, 1 to 53 (group with iso_year, not year).';
COMMENT ON COLUMN dim_date.weekday_name IS 'English weekday name, e.g. Monday.';
COMMENT ON COLUMN dim_date.is_weekend IS 'True on Saturday and Sunday.';
COMMENT ON COLUMN dim_date.month_start IS 'First day of the month (date): group by it for monthly series.';
COMMENT ON COLUMN dim_date.quarter_start IS 'First day of the quarter (date).';
COMMENT ON COLUMN dim_date.year_month IS 'e.g. 2026-01; sorts in calendar order.';

-- The catalogue: attributes to join onto report rows by (account, campaign_id) or (account, creative_id).
COMMENT ON COLUMN campaigns.campaign_id IS 'Campaign id (bigint), unique within an account; joins report_<name>.campaign_id.';
COMMENT ON COLUMN campaigns.name IS 'Campaign name as last synced.';
COMMENT ON COLUMN campaigns.ad_format IS 'Ad format of the campaign (text).';
COMMENT ON COLUMN campaigns.advertiser_id IS 'Advertiser of the campaign (bigint).';
COMMENT ON COLUMN campaigns.folder_id IS 'Folder of the campaign (bigint).';
COMMENT ON COLUMN campaigns.tier IS 'Delivery priority tier (smallint).';
COMMENT ON COLUMN campaigns.is_active IS 'True when the campaign is active on the ad server.';
COMMENT ON COLUMN campaigns.pricing_model IS 'Pricing model, e.g. cpm (text).';
COMMENT ON COLUMN campaigns.pricing_value IS 'Price in the pricing model (numeric); not additive.';
COMMENT ON COLUMN campaigns.delivery_start IS 'Start of delivery (timestamptz); null when unset.';
COMMENT ON COLUMN campaigns.delivery_end IS 'End of delivery (timestamptz); null when unset.';
COMMENT ON COLUMN campaigns.synced_at IS 'When adops sync last saw the campaign (timestamptz).';
COMMENT ON COLUMN campaigns.deleted_at IS 'When the campaign disappeared from the ad server (soft delete); null while it exists.';
COMMENT ON COLUMN creatives.creative_id IS 'Creative id (bigint), unique within an account; joins report_<name>.creative_id.';
COMMENT ON COLUMN creatives.campaign_id IS 'The campaign the creative belongs to.';
COMMENT ON COLUMN creatives.name IS 'Creative name as last synced.';
COMMENT ON COLUMN creatives.ad_type IS 'Ad type of the creative (text).';
COMMENT ON COLUMN creatives.is_active IS 'True when the creative is active on the ad server.';
COMMENT ON COLUMN creatives.data_width IS 'Width in pixels.';
COMMENT ON COLUMN creatives.data_height IS 'Height in pixels.';
COMMENT ON COLUMN creatives.account IS 'The ad server account the creative belongs to.';
COMMENT ON COLUMN creatives.synced_at IS 'When adops sync last saw the creative (timestamptz).';
COMMENT ON COLUMN creatives.deleted_at IS 'When the creative disappeared from the ad server (soft delete); null while it exists.';
COMMENT ON COLUMN campaign_zones.account IS 'The ad server account.';
COMMENT ON COLUMN campaign_zones.campaign_id IS 'Campaign id.';
COMMENT ON COLUMN campaign_zones.zone_id IS 'A zone (placement) the campaign is set to run in.';
COMMENT ON COLUMN campaigns_history.name IS 'Campaign name in this version.';
COMMENT ON COLUMN campaigns_history.valid_from IS 'Inclusive start: when this version was first synced (timestamptz).';
COMMENT ON COLUMN creatives_history.name IS 'Creative name in this version.';
COMMENT ON COLUMN creatives_history.valid_from IS 'Inclusive start: when this version was first synced (timestamptz).';

-- The read-only roles `adops migrate --bi-role NAME` set up: a report's bi_ views are granted to
-- each again whenever they are made (a view dropped and made again, e.g. by an evolution swap,
-- loses its grants), so dashboards never lose a view they could read.
CREATE TABLE dashboard_roles (
  role text PRIMARY KEY CHECK (role ~ '^[a-z_][a-z0-9_]{0,62}$'),
  granted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dashboard_roles IS 'Read-only BI roles set up by adops migrate --bi-role: SELECT on the bi_ views, dim_date and the catalogue, granted again whenever the views are made.';
