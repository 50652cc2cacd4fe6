-- Campaigns behind their goal (bi_campaign_pacing), furthest behind first: which will miss it.
-- Run in the warehouse schema (SET search_path TO adops). No parameters; SET adops.now to see another time.
SELECT
  account,
  campaign_id,
  coalesce(name, '(not in catalogue)') AS campaign,
  goal_event || ' ' || goal_period || ' ' || goal_speed AS goal,
  goal_value,
  delivered,
  round(expected::numeric) AS expected,
  round(pace::numeric, 2) AS pace,
  round(projected::numeric) AS projected,
  provisional
FROM bi_campaign_pacing
WHERE state = 'behind'
ORDER BY pace, account, campaign_id;
