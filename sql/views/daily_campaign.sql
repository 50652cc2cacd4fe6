-- View bi_daily_campaign over report_daily_campaign, for BI dashboards.
-- requires: day, campaign_id
-- Created by ensureViews (src/warehouse/entities/views.ts) after the report tables exist, with
-- search_path set to the warehouse schema. Facts of soft-deleted campaigns keep their names.
CREATE OR REPLACE VIEW bi_daily_campaign AS
SELECT
  r.account,
  r.day,
  r.campaign_id,
  c.name AS campaign_name,
  c.ad_format,
  c.advertiser_id,
  c.folder_id,
  c.tier,
  c.pricing_model,
  c.pricing_value,
  (c.deleted_at IS NOT NULL) AS campaign_deleted,
  r.ad_requests,
  r.filled_impressions,
  r.impressions,
  r.measurable_impressions,
  r.viewable_impressions,
  r.filled_impressions::double precision / NULLIF(r.ad_requests, 0) AS fill_rate,
  r.viewable_impressions::double precision / NULLIF(r.measurable_impressions, 0) AS viewability_rate,
  r.loaded_at,
  r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional
FROM report_daily_campaign r
LEFT JOIN campaigns c ON c.account = r.account AND c.campaign_id = r.campaign_id;
