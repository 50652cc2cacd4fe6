-- View bi_daily_creative over report_daily_creative, for BI dashboards.
-- requires: day, campaign_id, creative_id
-- Created by ensureViews (src/warehouse/entities/views.ts) after the report tables exist, with
-- search_path set to the warehouse schema. Facts of soft-deleted entities keep their names.
CREATE OR REPLACE VIEW bi_daily_creative AS
SELECT
  r.account,
  r.day,
  r.campaign_id,
  c.name AS campaign_name,
  c.ad_format,
  r.creative_id,
  k.name AS creative_name,
  k.ad_type,
  k.data_width,
  k.data_height,
  (k.deleted_at IS NOT NULL) AS creative_deleted,
  r.ad_requests,
  r.filled_impressions,
  r.impressions,
  r.measurable_impressions,
  r.viewable_impressions,
  r.filled_impressions::double precision / NULLIF(r.ad_requests, 0) AS fill_rate,
  r.viewable_impressions::double precision / NULLIF(r.measurable_impressions, 0) AS viewability_rate,
  r.loaded_at,
  r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional
FROM report_daily_creative r
LEFT JOIN campaigns c ON c.account = r.account AND c.campaign_id = r.campaign_id
LEFT JOIN creatives k ON k.account = r.account AND k.creative_id = r.creative_id;
