-- Top campaigns by impressions over the loaded days, with their names from the catalogue.
-- Run in the warehouse schema (SET search_path TO adops). No parameters.
SELECT
  account,
  campaign_id,
  coalesce(campaign_name, '(not in catalogue)') AS campaign,
  ad_format,
  sum(impressions) AS impressions,
  round(100 * sum(filled_impressions)::numeric / nullif(sum(ad_requests), 0), 2) AS fill_rate_pct
FROM bi_daily_campaign
GROUP BY account, campaign_id, campaign_name, ad_format
ORDER BY sum(impressions) DESC
LIMIT 10;
