-- View bi_daily_zone over report_daily_zone, for BI dashboards.
-- requires: day, zone_id
-- Zones have no names in the API; campaigns_assigned counts the live campaigns assigned to the zone.
CREATE OR REPLACE VIEW bi_daily_zone AS
SELECT
  r.account,
  r.day,
  r.zone_id,
  coalesce(z.campaigns_assigned, 0) AS campaigns_assigned,
  r.ad_requests,
  r.filled_impressions,
  r.impressions,
  r.measurable_impressions,
  r.viewable_impressions,
  r.filled_impressions::double precision / NULLIF(r.ad_requests, 0) AS fill_rate,
  r.viewable_impressions::double precision / NULLIF(r.measurable_impressions, 0) AS viewability_rate,
  r.loaded_at,
  r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional
FROM report_daily_zone r
LEFT JOIN (
  SELECT cz.account, cz.zone_id, count(*) AS campaigns_assigned
  FROM campaign_zones cz
  JOIN campaigns c ON c.account = cz.account AND c.campaign_id = cz.campaign_id AND c.deleted_at IS NULL
  GROUP BY cz.account, cz.zone_id
) z ON z.account = r.account AND z.zone_id = r.zone_id;
