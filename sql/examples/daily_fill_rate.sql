-- Daily fill rate: filled impressions over ad requests, per day.
-- Run in the warehouse schema (SET search_path TO adops). No parameters.
SELECT
  account,
  day,
  sum(ad_requests) AS ad_requests,
  sum(filled_impressions) AS filled_impressions,
  round(100 * sum(filled_impressions)::numeric / nullif(sum(ad_requests), 0), 2) AS fill_rate_pct
FROM bi_daily_campaign
GROUP BY account, day
ORDER BY account, day;
