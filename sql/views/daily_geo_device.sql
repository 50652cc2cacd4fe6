-- View bi_daily_geo_device over report_daily_geo_device, for BI dashboards.
-- requires: day, country, device
CREATE OR REPLACE VIEW bi_daily_geo_device AS
SELECT
  r.account,
  r.day,
  r.country,
  r.device,
  r.ad_requests,
  r.filled_impressions,
  r.impressions,
  r.measurable_impressions,
  r.viewable_impressions,
  r.filled_impressions::double precision / NULLIF(r.ad_requests, 0) AS fill_rate,
  r.viewable_impressions::double precision / NULLIF(r.measurable_impressions, 0) AS viewability_rate,
  r.loaded_at,
  r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional
FROM report_daily_geo_device r;
