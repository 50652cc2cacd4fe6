-- Viewability by device: viewable over measurable impressions.
-- Run in the warehouse schema (SET search_path TO adops). No parameters.
SELECT
  device,
  sum(measurable_impressions) AS measurable,
  sum(viewable_impressions) AS viewable,
  round(100 * sum(viewable_impressions)::numeric / nullif(sum(measurable_impressions), 0), 2) AS viewability_pct
FROM bi_daily_geo_device
GROUP BY device
ORDER BY device;
