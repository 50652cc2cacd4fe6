// bi_campaign_pacing's statements: the view over the catalogue and one report (pure text: a view takes no
// parameters, so its few values are checked names and numbers, and literals escaped), and what reads it.
import { escapeLiteral } from 'pg';
import { ident, qualified, statement } from '../platform/pg/handle.js';

export const PACING_VIEW = 'bi_campaign_pacing';

/** The report the view reads delivered impressions from: its name, stable table and time zone. */
export interface PacingSource {
  readonly report: string;
  readonly table: string;
  readonly timezone: string;
}

const secs = (interval: string) => `extract(epoch FROM ${interval})::float8`;
const local = (date: string) => `(${date})::timestamp AT TIME ZONE w.tz`;

/** The view (run it with the warehouse's schema on the search path); without a source, impressions are unknown.
 * "now" is the setting adops.now when set (SET adops.now = '...'), so a test or a user can fix the clock. */
export function pacingViewSql(
  source: PacingSource | undefined,
  bands: { behind: number; ahead: number },
): string {
  const rows =
    source === undefined
      ? 'SELECT NULL::text AS account, NULL::bigint AS campaign_id, NULL::date AS day, NULL::bigint AS impressions WHERE false'
      : `SELECT account, campaign_id, day, impressions FROM ${ident(source.table)}`;
  const loads =
    source === undefined
      ? 'SELECT NULL::text AS account, NULL::date AS first_day, NULL::date AS last_day WHERE false'
      : `SELECT account, min(period_start) AS first_day, max(period_end) AS last_day FROM report_loads
          WHERE report = ${escapeLiteral(source.report)} AND status = 'loaded' GROUP BY account`;
  const start = 'coalesce(k.delivery_start, k.created)';
  const share = `${secs(`w.until - ${local('w.until_day')}`)} / ${secs(`${local('w.until_day + 1')} - ${local('w.until_day')}`)}`;
  return `CREATE OR REPLACE VIEW ${ident(PACING_VIEW)} AS
WITH clock AS (
  SELECT coalesce(nullif(current_setting('adops.now', true), '')::timestamptz, now()) AS now,
         ${escapeLiteral(source?.timezone ?? 'UTC')}::text AS tz
), loaded AS (${loads}
), c AS (
  SELECT k.account, k.campaign_id, k.name, k.ad_format, k.is_active, k.pacing_event, k.pacing_period,
         k.pacing_speed, k.pacing_value, k.delivery_start, k.delivery_end, k.event_clicks, clock.now, clock.tz,
         CASE WHEN k.pacing_event = 'clicks' THEN least(clock.now, k.synced_at)
              WHEN l.last_day IS NOT NULL THEN least(clock.now, (l.last_day + 1)::timestamp AT TIME ZONE clock.tz)
         END AS as_of,
         CASE WHEN k.pacing_period = 'day'
              THEN greatest(date_trunc('day', ${start} AT TIME ZONE clock.tz) AT TIME ZONE clock.tz,
                            CASE WHEN k.pacing_event = 'impressions' THEN l.first_day::timestamp AT TIME ZONE clock.tz END)
              ELSE ${start} END AS since
    FROM campaigns k CROSS JOIN clock LEFT JOIN loaded l ON l.account = k.account
   WHERE k.deleted_at IS NULL AND k.pacing_event IS NOT NULL AND k.pacing_value > 0
), w AS (
  SELECT c.*, u.until, (u.until AT TIME ZONE c.tz)::date AS until_day
    FROM c CROSS JOIN LATERAL (SELECT CASE WHEN c.as_of IS NOT NULL THEN least(c.as_of, c.delivery_end) END AS until) u
), d AS (
  SELECT w.account, w.campaign_id, sum(r.impressions)::bigint AS impressions
    FROM w JOIN (${rows}) r ON r.account = w.account AND r.campaign_id = w.campaign_id
   WHERE ${local('r.day + 1')} > w.since AND ${local('r.day')} < w.until
   GROUP BY 1, 2
), f AS (
  SELECT w.*,
         CASE w.pacing_event WHEN 'clicks' THEN w.event_clicks
              WHEN 'impressions' THEN CASE WHEN w.as_of IS NOT NULL THEN coalesce(d.impressions, 0) END
         END AS delivered,
         CASE WHEN w.until IS NULL OR w.since IS NULL THEN NULL
              WHEN w.until <= w.since THEN 0::float8
              WHEN w.pacing_period = 'day'
              THEN w.pacing_value * ((w.until_day - (w.since AT TIME ZONE w.tz)::date)
                   + CASE WHEN w.pacing_speed = 'asap' THEN ceil(${share}) ELSE ${share} END)
              WHEN w.pacing_speed = 'asap' THEN w.pacing_value::float8
              WHEN w.delivery_end IS NOT NULL
              THEN w.pacing_value * least(1, ${secs('w.until - w.since')} / nullif(${secs('w.delivery_end - w.since')}, 0))
         END AS expected
    FROM w LEFT JOIN d ON d.account = w.account AND d.campaign_id = w.campaign_id
)
SELECT f.account, f.campaign_id, f.name, f.ad_format, f.is_active,
       f.pacing_event AS goal_event, f.pacing_period AS goal_period, f.pacing_speed AS goal_speed,
       f.pacing_value AS goal_value, f.delivery_start AS flight_start, f.delivery_end AS flight_end,
       f.as_of, f.delivered, f.expected, f.delivered / nullif(f.expected, 0) AS pace,
       CASE WHEN f.delivery_end IS NULL OR f.delivered IS NULL OR f.until IS NULL THEN NULL
            WHEN f.until >= f.delivery_end THEN f.delivered::float8
            WHEN f.until > f.since THEN f.delivered * ${secs('f.delivery_end - f.since')} / ${secs('f.until - f.since')}
       END AS projected,
       CASE WHEN f.now < f.delivery_start THEN 'not_started'
            WHEN f.delivery_end <= f.now THEN 'ended'
            WHEN f.pacing_period <> 'day' AND f.pacing_speed <> 'asap' AND f.delivery_end IS NULL THEN 'no_end'
            WHEN f.delivered IS NULL OR f.expected IS NULL OR f.expected = 0 THEN 'no_data'
            WHEN f.delivered < ${Number(bands.behind)} * f.expected THEN 'behind'
            WHEN f.delivered > ${Number(bands.ahead)} * f.expected THEN 'ahead'
            ELSE 'on_pace'
       END AS state,
       coalesce(f.as_of > date_trunc('day', f.now AT TIME ZONE f.tz) AT TIME ZONE f.tz, false) AS provisional
  FROM f`;
}

/** The view's definition as Postgres prints it, and whether it reads `table` (an evolution swap sets it aside). */
export const pacingDefinition = (schema: string, table?: string) =>
  statement<{ definition: string; reads: boolean }>(
    `SELECT pg_get_viewdef(v.oid) AS definition,
            EXISTS (SELECT 1 FROM pg_depend d JOIN pg_rewrite w ON w.oid = d.objid
                     WHERE w.ev_class = v.oid AND d.refobjid = to_regclass(quote_ident($1) || '.' || quote_ident($3))) AS reads
       FROM pg_class v WHERE v.oid = to_regclass(quote_ident($1) || '.' || quote_ident($2))`,
    [schema, PACING_VIEW, table ?? null],
  );

export const createPacingView = (schema: string, definition: string) =>
  statement(`CREATE VIEW ${qualified(schema, PACING_VIEW)} AS ${definition}`);

/** Campaigns with a goal and those behind it, per account. */
export const behindByAccount = (schema: string) =>
  statement<{ account: string; behind: number }>(
    `SELECT account, count(*) FILTER (WHERE state = 'behind')::int AS behind
       FROM ${qualified(schema, PACING_VIEW)} GROUP BY account ORDER BY account`,
  );
