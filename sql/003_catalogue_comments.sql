-- Comments on every catalogue column a BI role reads (adops migrate --bi-role): campaigns had 17 of
-- its 34 columns uncommented, creatives 12 of 24, campaigns_history and creatives_history 7 of 10.
-- BI tools show these as field descriptions. Comments only: no table or row changes.

-- campaigns
COMMENT ON COLUMN campaigns.conversion_tracker_id IS 'Conversion tracker of the campaign (bigint, the API''s conversion_tracker_id); null when it has none.';
COMMENT ON COLUMN campaigns.account_id_created IS 'Ad server user account that created the campaign (bigint, the API''s account_id_created); not the account column.';
COMMENT ON COLUMN campaigns.account_id_modified IS 'Ad server user account that last modified the campaign (bigint, the API''s account_id_modified); not the account column.';
COMMENT ON COLUMN campaigns.created IS 'When the campaign was created on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN campaigns.modified IS 'When the campaign was last modified on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN campaigns.is_archived IS 'True when the campaign is archived on the ad server (read-only there).';
COMMENT ON COLUMN campaigns.notes IS 'Free-text notes on the campaign (text), as entered on the ad server.';
COMMENT ON COLUMN campaigns.weight IS 'Delivery weight of the campaign, 1 to 100 (smallint); not additive.';
COMMENT ON COLUMN campaigns.event_ad_requests IS 'Lifetime ad requests of the campaign as the API counted them at the last sync (event_counts.ad_requests, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN campaigns.event_clicks IS 'Lifetime clicks of the campaign as the API counted them at the last sync (event_counts.clicks, bigint): a running total since the campaign began, not a period''s traffic; reports have no clicks. Never sum it across syncs.';
COMMENT ON COLUMN campaigns.event_filled_impressions IS 'Lifetime filled impressions of the campaign as the API counted them at the last sync (event_counts.filled_impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN campaigns.event_impressions IS 'Lifetime impressions of the campaign as the API counted them at the last sync (event_counts.impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN campaigns.event_measurable_impressions IS 'Lifetime measurable impressions of the campaign as the API counted them at the last sync (event_counts.measurable_impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN campaigns.event_viewable_impressions IS 'Lifetime viewable impressions of the campaign as the API counted them at the last sync (event_counts.viewable_impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN campaigns.pacing_event IS 'The event pacing spreads: impressions, clicks or conversions (text); null without pacing.';
COMMENT ON COLUMN campaigns.pacing_period IS 'The period pacing spreads pacing_value over: due_date (the flight) or day (text); null without pacing.';
COMMENT ON COLUMN campaigns.pacing_value IS 'Number of pacing_event events to deliver over pacing_period (bigint, the pacing goal); null without pacing.';

-- creatives
COMMENT ON COLUMN creatives.account_id_created IS 'Ad server user account that created the creative (bigint, the API''s account_id_created); not the account column.';
COMMENT ON COLUMN creatives.account_id_modified IS 'Ad server user account that last modified the creative (bigint, the API''s account_id_modified); not the account column.';
COMMENT ON COLUMN creatives.created IS 'When the creative was created on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN creatives.modified IS 'When the creative was last modified on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN creatives.weight IS 'Delivery weight of the creative (integer); not additive.';
COMMENT ON COLUMN creatives.delivery_start IS 'Start of delivery (timestamptz); null when unset (starts immediately).';
COMMENT ON COLUMN creatives.delivery_end IS 'End of delivery (timestamptz); null when unset (runs without end).';
COMMENT ON COLUMN creatives.thumbnail_color IS 'Average colour of the creative''s thumbnail, #rrggbb (text, thumbnail.average_color).';
COMMENT ON COLUMN creatives.thumbnail_filehash IS 'File name of the creative''s thumbnail on the ad server (text, thumbnail.filehash).';
COMMENT ON COLUMN creatives.data_filehash IS 'File name of the creative''s media on the ad server (text, data.filehash).';
COMMENT ON COLUMN creatives.data_landing_page IS 'Landing page URL of the creative (text, data.landing_page); null or empty when it has none.';
COMMENT ON COLUMN creatives.data IS 'The creative''s data object as returned (jsonb): filehash, width, height, landing_page and, per ad type, more.';

-- campaigns_history: one row per version of a campaign
COMMENT ON COLUMN campaigns_history.account IS 'The ad server account of the campaign; join campaigns ON (account, campaign_id).';
COMMENT ON COLUMN campaigns_history.campaign_id IS 'Campaign id (bigint); joins campaigns and report_<name>.campaign_id within the account.';
COMMENT ON COLUMN campaigns_history.is_active IS 'Whether the campaign was active on the ad server in this version.';
COMMENT ON COLUMN campaigns_history.is_archived IS 'Whether the campaign was archived in this version.';
COMMENT ON COLUMN campaigns_history.delivery_start IS 'Start of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN campaigns_history.delivery_end IS 'End of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN campaigns_history.deleted IS 'True for the version that began when the campaign disappeared from the ad server (soft delete).';

-- creatives_history: one row per version of a creative
COMMENT ON COLUMN creatives_history.account IS 'The ad server account of the creative; join creatives ON (account, creative_id).';
COMMENT ON COLUMN creatives_history.creative_id IS 'Creative id (bigint); joins creatives and report_<name>.creative_id within the account.';
COMMENT ON COLUMN creatives_history.campaign_id IS 'The campaign the creative belonged to in this version (bigint).';
COMMENT ON COLUMN creatives_history.is_active IS 'Whether the creative was active on the ad server in this version.';
COMMENT ON COLUMN creatives_history.delivery_start IS 'Start of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN creatives_history.delivery_end IS 'End of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN creatives_history.deleted IS 'True for the version that began when the creative disappeared from the ad server (soft delete).';
