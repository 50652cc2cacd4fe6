CREATE SCHEMA adops;
CREATE FUNCTION adops.api_limit_pause(p_key text, p_ms bigint) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'adops', 'public'
    AS $$
DECLARE
  t_now timestamptz;
  t_until timestamptz;
BEGIN
  INSERT INTO api_limits (key) VALUES (p_key) ON CONFLICT DO NOTHING;
  SELECT l.paused_until INTO t_until FROM api_limits l WHERE l.key = p_key FOR UPDATE;
  t_now := clock_timestamp();
  IF t_now + p_ms * interval '1 millisecond' <= t_until THEN
    RETURN ceil(extract(epoch FROM t_until - t_now) * 1000);
  END IF;
  UPDATE api_limits l SET paused_until = t_now + p_ms * interval '1 millisecond' WHERE l.key = p_key;
  PERFORM pg_notify('adops_api_pause', json_build_object('schema', current_schema(), 'key', p_key, 'ms', p_ms)::text);
  RETURN p_ms;
END
$$;
CREATE FUNCTION adops.api_limit_take(p_key text, p_max integer, p_window integer, p_want integer, p_longest bigint, OUT taken integer, OUT window_no bigint, OUT left_ms bigint, OUT paused boolean) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'adops', 'public'
    AS $$
DECLARE
  r api_limits;
  now_ms bigint;
  until_ms bigint;
BEGIN
  INSERT INTO api_limits (key) VALUES (p_key) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM api_limits l WHERE l.key = p_key FOR UPDATE;
  -- Read after the lock: a wait for it never makes this call's clock stale.
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
  until_ms := CASE WHEN r.paused_until = '-infinity' THEN 0 ELSE floor(extract(epoch FROM r.paused_until) * 1000) END;
  IF until_ms > now_ms + p_longest THEN
    until_ms := now_ms + p_longest;
    UPDATE api_limits l SET paused_until = to_timestamp(until_ms / 1000.0) WHERE l.key = p_key;
  END IF;
  IF until_ms > now_ms THEN
    taken := 0; window_no := -1; left_ms := until_ms - now_ms; paused := true;
    RETURN;
  END IF;
  window_no := now_ms / p_window;
  left_ms := (window_no + 1) * p_window - now_ms;
  paused := false;
  taken := least(p_want, p_max - CASE WHEN r.window_no = window_no THEN r.taken ELSE 0 END);
  IF taken <= 0 THEN
    taken := 0;
    RETURN;
  END IF;
  UPDATE api_limits l
     SET taken = CASE WHEN l.window_no = api_limit_take.window_no THEN l.taken ELSE 0 END + api_limit_take.taken,
         window_no = api_limit_take.window_no
   WHERE l.key = p_key;
END
$$;
CREATE TABLE adops.announced_disagreements (
    account text NOT NULL,
    period_start date NOT NULL,
    period_end date NOT NULL,
    report text NOT NULL,
    other_report text NOT NULL,
    sums text NOT NULL,
    announced_at timestamp with time zone DEFAULT now() NOT NULL
);
COMMENT ON TABLE adops.announced_disagreements IS 'Report disagreements already announced by the report.disagrees webhook.';
CREATE TABLE adops.announced_pacing (
    account text NOT NULL,
    campaign_id bigint NOT NULL,
    day date NOT NULL,
    announced_at timestamp with time zone DEFAULT now() NOT NULL
);
COMMENT ON TABLE adops.announced_pacing IS 'Campaigns the campaign.behind webhook announced as behind, once per campaign and UTC day.';
COMMENT ON COLUMN adops.announced_pacing.day IS 'The UTC day of the announcement: a campaign still behind the next day is announced again.';
CREATE TABLE adops.api_limits (
    key text NOT NULL,
    window_no bigint DEFAULT 0 NOT NULL,
    taken integer DEFAULT 0 NOT NULL,
    paused_until timestamp with time zone DEFAULT '-infinity'::timestamp with time zone NOT NULL
);
COMMENT ON TABLE adops.api_limits IS 'The API request limit shared by every worker (adops worker), and its 429 pause.';
CREATE TABLE adops.campaigns (
    campaign_id bigint NOT NULL,
    name text,
    ad_format text,
    advertiser_id bigint,
    conversion_tracker_id bigint,
    folder_id bigint,
    account_id_created bigint,
    account_id_modified bigint,
    created timestamp with time zone,
    modified timestamp with time zone,
    is_active boolean,
    is_archived boolean,
    notes text,
    tier smallint,
    weight smallint,
    delivery_start timestamp with time zone,
    delivery_end timestamp with time zone,
    event_ad_requests bigint,
    event_clicks bigint,
    event_filled_impressions bigint,
    event_impressions bigint,
    event_measurable_impressions bigint,
    event_viewable_impressions bigint,
    pricing_model text,
    pricing_value numeric,
    pacing_event text,
    pacing_period text,
    pacing_speed text,
    pacing_value bigint,
    targeting jsonb,
    raw jsonb NOT NULL,
    synced_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT campaigns_account_check CHECK ((account ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);
COMMENT ON TABLE adops.campaigns IS 'Campaign catalogue from GET /campaigns; soft-deleted via deleted_at.';
COMMENT ON COLUMN adops.campaigns.campaign_id IS 'Campaign id (bigint), unique within an account; joins report_<name>.campaign_id.';
COMMENT ON COLUMN adops.campaigns.name IS 'Campaign name as last synced.';
COMMENT ON COLUMN adops.campaigns.ad_format IS 'Ad format of the campaign (text).';
COMMENT ON COLUMN adops.campaigns.advertiser_id IS 'Advertiser of the campaign (bigint).';
COMMENT ON COLUMN adops.campaigns.conversion_tracker_id IS 'Conversion tracker of the campaign (bigint, the API''s conversion_tracker_id); null when it has none.';
COMMENT ON COLUMN adops.campaigns.folder_id IS 'Folder of the campaign (bigint).';
COMMENT ON COLUMN adops.campaigns.account_id_created IS 'Ad server user account that created the campaign (bigint, the API''s account_id_created); not the account column.';
COMMENT ON COLUMN adops.campaigns.account_id_modified IS 'Ad server user account that last modified the campaign (bigint, the API''s account_id_modified); not the account column.';
COMMENT ON COLUMN adops.campaigns.created IS 'When the campaign was created on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN adops.campaigns.modified IS 'When the campaign was last modified on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN adops.campaigns.is_active IS 'True when the campaign is active on the ad server.';
COMMENT ON COLUMN adops.campaigns.is_archived IS 'True when the campaign is archived on the ad server (read-only there).';
COMMENT ON COLUMN adops.campaigns.notes IS 'Free-text notes on the campaign (text), as entered on the ad server.';
COMMENT ON COLUMN adops.campaigns.tier IS 'Delivery priority tier (smallint).';
COMMENT ON COLUMN adops.campaigns.weight IS 'Delivery weight of the campaign, 1 to 100 (smallint); not additive.';
COMMENT ON COLUMN adops.campaigns.delivery_start IS 'Start of delivery (timestamptz); null when unset.';
COMMENT ON COLUMN adops.campaigns.delivery_end IS 'End of delivery (timestamptz); null when unset.';
COMMENT ON COLUMN adops.campaigns.event_ad_requests IS 'Lifetime ad requests of the campaign as the API counted them at the last sync (event_counts.ad_requests, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN adops.campaigns.event_clicks IS 'Lifetime clicks of the campaign as the API counted them at the last sync (event_counts.clicks, bigint): a running total since the campaign began, not a period''s traffic; reports have no clicks. Never sum it across syncs.';
COMMENT ON COLUMN adops.campaigns.event_filled_impressions IS 'Lifetime filled impressions of the campaign as the API counted them at the last sync (event_counts.filled_impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN adops.campaigns.event_impressions IS 'Lifetime impressions of the campaign as the API counted them at the last sync (event_counts.impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN adops.campaigns.event_measurable_impressions IS 'Lifetime measurable impressions of the campaign as the API counted them at the last sync (event_counts.measurable_impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN adops.campaigns.event_viewable_impressions IS 'Lifetime viewable impressions of the campaign as the API counted them at the last sync (event_counts.viewable_impressions, bigint): a running total since the campaign began, not a period''s traffic. Never sum it with report rows or across syncs; traffic by day is in the bi_ views.';
COMMENT ON COLUMN adops.campaigns.pricing_model IS 'Pricing model, e.g. cpm (text).';
COMMENT ON COLUMN adops.campaigns.pricing_value IS 'Price in the pricing model (numeric); not additive.';
COMMENT ON COLUMN adops.campaigns.pacing_event IS 'The event pacing spreads: impressions, clicks or conversions (text); null without pacing.';
COMMENT ON COLUMN adops.campaigns.pacing_period IS 'The period pacing spreads pacing_value over: due_date (the flight) or day (text); null without pacing.';
COMMENT ON COLUMN adops.campaigns.pacing_speed IS 'spread or asap; the spec''s spelling "spead" is stored as spread.';
COMMENT ON COLUMN adops.campaigns.pacing_value IS 'Number of pacing_event events to deliver over pacing_period (bigint, the pacing goal); null without pacing.';
COMMENT ON COLUMN adops.campaigns.targeting IS 'NULL when the API returns [] (unset).';
COMMENT ON COLUMN adops.campaigns.raw IS 'The whole campaign object as returned by the API.';
COMMENT ON COLUMN adops.campaigns.synced_at IS 'When adops sync last saw the campaign (timestamptz).';
COMMENT ON COLUMN adops.campaigns.deleted_at IS 'When the campaign disappeared from the ad server (soft delete); null while it exists.';
COMMENT ON COLUMN adops.campaigns.account IS 'The ad server account the campaign belongs to; campaign ids are unique within an account.';
CREATE TABLE adops.report_daily_campaign (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL
)
PARTITION BY RANGE (period_start);
COMMENT ON TABLE adops.report_daily_campaign IS 'Report daily_campaign as pulled from the ad server API: one row per account, period and dimension values; counters (ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions) are counts to sum. Dashboards read bi_daily_campaign instead.';
COMMENT ON COLUMN adops.report_daily_campaign.period_start IS 'First day of the period the row was pulled for (date, inclusive: the pull date_from).';
COMMENT ON COLUMN adops.report_daily_campaign.period_end IS 'Last day of the period the row was pulled for (date, inclusive: the pull date_until).';
COMMENT ON COLUMN adops.report_daily_campaign.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.report_daily_campaign.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes.';
COMMENT ON COLUMN adops.report_daily_campaign.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_campaign.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_campaign.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_campaign.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_campaign.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_campaign.load_id IS 'The report_loads row of the pull that loaded this period (bigint); not additive.';
COMMENT ON COLUMN adops.report_daily_campaign.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.report_daily_campaign.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
CREATE TABLE adops.report_loads (
    load_id bigint NOT NULL,
    report text NOT NULL,
    period_start date NOT NULL,
    period_end date NOT NULL,
    dimensions text[] NOT NULL,
    status text NOT NULL,
    rows integer,
    reconciled boolean,
    mismatch jsonb,
    restatement jsonb,
    previous_load_id bigint,
    replay_of bigint,
    http_attempts integer NOT NULL,
    response_bytes bigint,
    fetch_ms integer,
    load_ms integer,
    fetched_at timestamp with time zone,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    error text,
    job_id text,
    unreconciled_reason text,
    fetch_token bigint,
    account text DEFAULT 'default'::text NOT NULL,
    retention_dropped_at timestamp with time zone,
    failed_step text,
    provisional boolean DEFAULT false NOT NULL,
    CONSTRAINT report_loads_account_check CHECK ((account ~ '^[a-z][a-z0-9_]{0,40}$'::text)),
    CONSTRAINT report_loads_failed_step_check CHECK (((failed_step IS NULL) OR ((status = 'failed'::text) AND (failed_step = ANY (ARRAY['fetch'::text, 'parse'::text, 'load'::text, 'archive'::text]))))),
    CONSTRAINT report_loads_status_check CHECK ((status = ANY (ARRAY['loaded'::text, 'failed'::text, 'superseded'::text]))),
    CONSTRAINT report_loads_unreconciled_reason_check CHECK ((unreconciled_reason = ANY (ARRAY['mismatch'::text, 'no totals'::text, 'partial totals'::text])))
);
COMMENT ON TABLE adops.report_loads IS 'One row per pull attempt that reached the loader: report, account, period, status (loaded, failed, superseded), rows, reconciliation, HTTP attempts, bytes, durations, error. Not traffic: never sum it into a dashboard''s numbers.';
COMMENT ON COLUMN adops.report_loads.report IS 'The report (job definition name).';
COMMENT ON COLUMN adops.report_loads.period_start IS 'First day of the pulled period (date, inclusive).';
COMMENT ON COLUMN adops.report_loads.period_end IS 'Last day of the pulled period (date, inclusive).';
COMMENT ON COLUMN adops.report_loads.status IS 'loaded: its rows are current; superseded: a later load replaced them; failed: the pull failed (earlier rows, if any, stay).';
COMMENT ON COLUMN adops.report_loads.rows IS 'Rows loaded (count); null for a failed attempt.';
COMMENT ON COLUMN adops.report_loads.reconciled IS 'True when the rows add up to the API''s totals.';
COMMENT ON COLUMN adops.report_loads.recorded_at IS 'When the attempt was recorded (timestamptz).';
COMMENT ON COLUMN adops.report_loads.fetch_token IS 'nextval(fetch_tokens) taken when the fetch started (a replay keeps its original''s): the fencing order of loads. fetched_at is information only.';
COMMENT ON COLUMN adops.report_loads.account IS 'The ad server account of the pull (ADOPS_ACCOUNTS_FILE); default for a single-account deployment.';
COMMENT ON COLUMN adops.report_loads.failed_step IS 'The step a failed pull failed at: fetch, parse, load or archive (its message is in error); NULL for loaded and superseded attempts, and for failures recorded before 004.';
COMMENT ON COLUMN adops.report_loads.provisional IS 'True for a pull of a period not yet ended when its fetch started (today, in the report''s time zone): its rows are replaced by the next pull, and the period is final once a pull after its end loads it. Its restatement, and that of the load after it, stays NULL.';
CREATE VIEW adops.bi_campaign_pacing AS
 WITH clock AS (
         SELECT COALESCE((NULLIF(current_setting('adops.now'::text, true), ''::text))::timestamp with time zone, now()) AS now,
            'UTC'::text AS tz
        ), loaded AS (
         SELECT report_loads.account,
            min(report_loads.period_start) AS first_day,
            max(report_loads.period_end) AS last_day
           FROM adops.report_loads
          WHERE ((report_loads.report = 'daily_campaign'::text) AND (report_loads.status = 'loaded'::text))
          GROUP BY report_loads.account
        ), c AS (
         SELECT k.account,
            k.campaign_id,
            k.name,
            k.ad_format,
            k.is_active,
            k.pacing_event,
            k.pacing_period,
            k.pacing_speed,
            k.pacing_value,
            k.delivery_start,
            k.delivery_end,
            k.event_clicks,
            clock.now,
            clock.tz,
                CASE
                    WHEN (k.pacing_event = 'clicks'::text) THEN LEAST(clock.now, k.synced_at)
                    WHEN (l.last_day IS NOT NULL) THEN LEAST(clock.now, (((l.last_day + 1))::timestamp without time zone AT TIME ZONE clock.tz))
                    ELSE NULL::timestamp with time zone
                END AS as_of,
                CASE
                    WHEN (k.pacing_period = 'day'::text) THEN GREATEST((date_trunc('day'::text, (COALESCE(k.delivery_start, k.created) AT TIME ZONE clock.tz)) AT TIME ZONE clock.tz),
                    CASE
                        WHEN (k.pacing_event = 'impressions'::text) THEN ((l.first_day)::timestamp without time zone AT TIME ZONE clock.tz)
                        ELSE NULL::timestamp with time zone
                    END)
                    ELSE COALESCE(k.delivery_start, k.created)
                END AS since
           FROM ((adops.campaigns k
             CROSS JOIN clock)
             LEFT JOIN loaded l ON ((l.account = k.account)))
          WHERE ((k.deleted_at IS NULL) AND (k.pacing_event IS NOT NULL) AND (k.pacing_value > 0))
        ), w AS (
         SELECT c.account,
            c.campaign_id,
            c.name,
            c.ad_format,
            c.is_active,
            c.pacing_event,
            c.pacing_period,
            c.pacing_speed,
            c.pacing_value,
            c.delivery_start,
            c.delivery_end,
            c.event_clicks,
            c.now,
            c.tz,
            c.as_of,
            c.since,
            u.until,
            ((u.until AT TIME ZONE c.tz))::date AS until_day
           FROM (c
             CROSS JOIN LATERAL ( SELECT
                        CASE
                            WHEN (c.as_of IS NOT NULL) THEN LEAST(c.as_of, c.delivery_end)
                            ELSE NULL::timestamp with time zone
                        END AS until) u)
        ), d AS (
         SELECT w.account,
            w.campaign_id,
            (sum(r.impressions))::bigint AS impressions
           FROM (w
             JOIN ( SELECT report_daily_campaign.account,
                    report_daily_campaign.campaign_id,
                    report_daily_campaign.day,
                    report_daily_campaign.impressions
                   FROM adops.report_daily_campaign) r ON (((r.account = w.account) AND (r.campaign_id = w.campaign_id))))
          WHERE (((((r.day + 1))::timestamp without time zone AT TIME ZONE w.tz) > w.since) AND (((r.day)::timestamp without time zone AT TIME ZONE w.tz) < w.until))
          GROUP BY w.account, w.campaign_id
        ), f AS (
         SELECT w.account,
            w.campaign_id,
            w.name,
            w.ad_format,
            w.is_active,
            w.pacing_event,
            w.pacing_period,
            w.pacing_speed,
            w.pacing_value,
            w.delivery_start,
            w.delivery_end,
            w.event_clicks,
            w.now,
            w.tz,
            w.as_of,
            w.since,
            w.until,
            w.until_day,
                CASE w.pacing_event
                    WHEN 'clicks'::text THEN w.event_clicks
                    WHEN 'impressions'::text THEN
                    CASE
                        WHEN (w.as_of IS NOT NULL) THEN COALESCE(d.impressions, (0)::bigint)
                        ELSE NULL::bigint
                    END
                    ELSE NULL::bigint
                END AS delivered,
                CASE
                    WHEN ((w.until IS NULL) OR (w.since IS NULL)) THEN NULL::double precision
                    WHEN (w.until <= w.since) THEN (0)::double precision
                    WHEN (w.pacing_period = 'day'::text) THEN ((w.pacing_value)::double precision * (((w.until_day - ((w.since AT TIME ZONE w.tz))::date))::double precision +
                    CASE
                        WHEN (w.pacing_speed = 'asap'::text) THEN ceil(((EXTRACT(epoch FROM (w.until - ((w.until_day)::timestamp without time zone AT TIME ZONE w.tz))))::double precision / (EXTRACT(epoch FROM ((((w.until_day + 1))::timestamp without time zone AT TIME ZONE w.tz) - ((w.until_day)::timestamp without time zone AT TIME ZONE w.tz))))::double precision))
                        ELSE ((EXTRACT(epoch FROM (w.until - ((w.until_day)::timestamp without time zone AT TIME ZONE w.tz))))::double precision / (EXTRACT(epoch FROM ((((w.until_day + 1))::timestamp without time zone AT TIME ZONE w.tz) - ((w.until_day)::timestamp without time zone AT TIME ZONE w.tz))))::double precision)
                    END))
                    WHEN (w.pacing_speed = 'asap'::text) THEN (w.pacing_value)::double precision
                    WHEN (w.delivery_end IS NOT NULL) THEN ((w.pacing_value)::double precision * LEAST((1)::double precision, ((EXTRACT(epoch FROM (w.until - w.since)))::double precision / NULLIF((EXTRACT(epoch FROM (w.delivery_end - w.since)))::double precision, (0)::double precision))))
                    ELSE NULL::double precision
                END AS expected
           FROM (w
             LEFT JOIN d ON (((d.account = w.account) AND (d.campaign_id = w.campaign_id))))
        )
 SELECT f.account,
    f.campaign_id,
    f.name,
    f.ad_format,
    f.is_active,
    f.pacing_event AS goal_event,
    f.pacing_period AS goal_period,
    f.pacing_speed AS goal_speed,
    f.pacing_value AS goal_value,
    f.delivery_start AS flight_start,
    f.delivery_end AS flight_end,
    f.as_of,
    f.delivered,
    f.expected,
    ((f.delivered)::double precision / NULLIF(f.expected, (0)::double precision)) AS pace,
        CASE
            WHEN ((f.delivery_end IS NULL) OR (f.delivered IS NULL) OR (f.until IS NULL)) THEN NULL::double precision
            WHEN (f.until >= f.delivery_end) THEN (f.delivered)::double precision
            WHEN (f.until > f.since) THEN (((f.delivered)::double precision * (EXTRACT(epoch FROM (f.delivery_end - f.since)))::double precision) / (EXTRACT(epoch FROM (f.until - f.since)))::double precision)
            ELSE NULL::double precision
        END AS projected,
        CASE
            WHEN (f.now < f.delivery_start) THEN 'not_started'::text
            WHEN (f.delivery_end <= f.now) THEN 'ended'::text
            WHEN ((f.pacing_period <> 'day'::text) AND (f.pacing_speed <> 'asap'::text) AND (f.delivery_end IS NULL)) THEN 'no_end'::text
            WHEN ((f.delivered IS NULL) OR (f.expected IS NULL) OR (f.expected = (0)::double precision)) THEN 'no_data'::text
            WHEN ((f.delivered)::double precision < ((0.9)::double precision * f.expected)) THEN 'behind'::text
            WHEN ((f.delivered)::double precision > ((1.1)::double precision * f.expected)) THEN 'ahead'::text
            ELSE 'on_pace'::text
        END AS state,
    COALESCE((f.as_of > (date_trunc('day'::text, (f.now AT TIME ZONE f.tz)) AT TIME ZONE f.tz)), false) AS provisional
   FROM f;
COMMENT ON VIEW adops.bi_campaign_pacing IS 'Pacing of each campaign with a goal: delivered against expected to date, pace, projected and state. Its clock is now(), or the setting adops.now when set (SET adops.now = ...). adops migrate says which report it reads.';
COMMENT ON COLUMN adops.bi_campaign_pacing.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account).';
COMMENT ON COLUMN adops.bi_campaign_pacing.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for the rest of it.';
COMMENT ON COLUMN adops.bi_campaign_pacing.name IS 'Campaign name as last synced.';
COMMENT ON COLUMN adops.bi_campaign_pacing.ad_format IS 'Ad format of the campaign (text).';
COMMENT ON COLUMN adops.bi_campaign_pacing.is_active IS 'True when the campaign is active on the ad server.';
COMMENT ON COLUMN adops.bi_campaign_pacing.goal_event IS 'What the goal counts: impressions, clicks or conversions.';
COMMENT ON COLUMN adops.bi_campaign_pacing.goal_period IS 'due_date: one goal over the whole flight; day: the goal is per day.';
COMMENT ON COLUMN adops.bi_campaign_pacing.goal_speed IS 'spread: evenly over the flight (or the day); asap: as fast as possible, so the whole goal is due at once.';
COMMENT ON COLUMN adops.bi_campaign_pacing.goal_value IS 'The goal: events over the flight (due_date) or per day (day).';
COMMENT ON COLUMN adops.bi_campaign_pacing.flight_start IS 'Start of delivery (timestamptz); NULL: it started at once (the campaign''s created time is used).';
COMMENT ON COLUMN adops.bi_campaign_pacing.flight_end IS 'End of delivery (timestamptz); NULL: it runs without end.';
COMMENT ON COLUMN adops.bi_campaign_pacing.as_of IS 'What delivered covers: the end of the newest loaded day of the report (now while that day is today); for clicks goals, when adops sync read the counter.';
COMMENT ON COLUMN adops.bi_campaign_pacing.delivered IS 'Events delivered in the flight up to as_of: impressions summed from the report; clicks from the campaign''s lifetime counter (campaigns.event_clicks, not a report); NULL for conversions (no source) or when nothing of the report is loaded. A day goal counts from the first loaded day on.';
COMMENT ON COLUMN adops.bi_campaign_pacing.expected IS 'Events due by as_of: spread, the goal times the elapsed share of the flight; asap, the whole goal; day goals, the goal per day, the last day prorated by its elapsed share in the report''s time zone (asap: whole).';
COMMENT ON COLUMN adops.bi_campaign_pacing.pace IS 'delivered / expected (ratio; 1 is on pace); NULL when nothing is expected yet.';
COMMENT ON COLUMN adops.bi_campaign_pacing.projected IS 'Events delivered by the flight end at the pace so far (delivered once the flight ended); NULL without an end.';
COMMENT ON COLUMN adops.bi_campaign_pacing.state IS 'not_started, ended, no_end (a due_date spread goal without an end), no_data (nothing to measure yet), or by pace: behind, on_pace, ahead (bands ADOPS_PACING_BEHIND and ADOPS_PACING_AHEAD at adops migrate).';
COMMENT ON COLUMN adops.bi_campaign_pacing.provisional IS 'True when as_of includes today''s unfinished period: the figures still move.';
CREATE VIEW adops.bi_daily_campaign AS
 SELECT r.account,
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
    ((r.filled_impressions)::double precision / (NULLIF(r.ad_requests, 0))::double precision) AS fill_rate,
    ((r.viewable_impressions)::double precision / (NULLIF(r.measurable_impressions, 0))::double precision) AS viewability_rate,
    r.loaded_at,
    (r.load_id IN ( SELECT report_loads.load_id
           FROM adops.report_loads
          WHERE report_loads.provisional)) AS provisional
   FROM (adops.report_daily_campaign r
     LEFT JOIN adops.campaigns c ON (((c.account = r.account) AND (c.campaign_id = r.campaign_id))));
COMMENT ON VIEW adops.bi_daily_campaign IS 'BI view of report daily_campaign: its rows with campaign/creative names and per-row fill_rate and viewability_rate. Sum the counters; compute rates as ratios of sums, never average them.';
COMMENT ON COLUMN adops.bi_daily_campaign.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_campaign.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_campaign.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes.';
COMMENT ON COLUMN adops.bi_daily_campaign.campaign_name IS 'Campaign name from the catalogue (campaigns.name as last synced; kept after deletion); null until adops sync saw the campaign.';
COMMENT ON COLUMN adops.bi_daily_campaign.ad_format IS 'Ad format (text).';
COMMENT ON COLUMN adops.bi_daily_campaign.advertiser_id IS 'Advertiser of the campaign (bigint, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_campaign.folder_id IS 'Folder of the campaign (bigint, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_campaign.tier IS 'Campaign tier (smallint): delivery priority.';
COMMENT ON COLUMN adops.bi_daily_campaign.pricing_model IS 'Pricing model of the campaign, e.g. cpm (text, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_campaign.pricing_value IS 'Price of the campaign in its pricing model (numeric, from the catalogue); not additive.';
COMMENT ON COLUMN adops.bi_daily_campaign.campaign_deleted IS 'True when the campaign is gone from the ad server (soft-deleted in campaigns).';
COMMENT ON COLUMN adops.bi_daily_campaign.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign.fill_rate IS 'filled_impressions / ad_requests of this row (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_campaign.viewability_rate IS 'viewable_impressions / measurable_impressions of this row (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_campaign.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_campaign.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE VIEW adops.bi_daily_campaign_daily AS
 SELECT v.day,
    v.account,
    v.campaign_id,
    v.campaign_name,
    v.ad_format,
    v.advertiser_id,
    v.folder_id,
    v.tier,
    v.pricing_model,
    v.pricing_value,
    v.campaign_deleted,
    (sum(v.ad_requests))::bigint AS ad_requests,
    (sum(v.filled_impressions))::bigint AS filled_impressions,
    (sum(v.impressions))::bigint AS impressions,
    (sum(v.measurable_impressions))::bigint AS measurable_impressions,
    (sum(v.viewable_impressions))::bigint AS viewable_impressions,
    ((sum(v.filled_impressions))::double precision / (NULLIF(sum(v.ad_requests), (0)::numeric))::double precision) AS fill_rate,
    ((sum(v.viewable_impressions))::double precision / (NULLIF(sum(v.measurable_impressions), (0)::numeric))::double precision) AS viewability_rate,
    max(v.loaded_at) AS loaded_at,
    bool_or(v.provisional) AS provisional
   FROM adops.bi_daily_campaign v
  GROUP BY v.day, v.account, v.campaign_id, v.campaign_name, v.ad_format, v.advertiser_id, v.folder_id, v.tier, v.pricing_model, v.pricing_value, v.campaign_deleted;
COMMENT ON VIEW adops.bi_daily_campaign_daily IS 'bi_daily_campaign summed per day and per its other columns, rates computed as ratios of the day''s sums. Sum its counters over days; never average its rates.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.campaign_name IS 'Campaign name from the catalogue (campaigns.name as last synced; kept after deletion); null until adops sync saw the campaign.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.ad_format IS 'Ad format (text).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.advertiser_id IS 'Advertiser of the campaign (bigint, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.folder_id IS 'Folder of the campaign (bigint, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.tier IS 'Campaign tier (smallint): delivery priority.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.pricing_model IS 'Pricing model of the campaign, e.g. cpm (text, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.pricing_value IS 'Price of the campaign in its pricing model (numeric, from the catalogue); not additive.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.campaign_deleted IS 'True when the campaign is gone from the ad server (soft-deleted in campaigns).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.ad_requests IS 'Ad requests received, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.filled_impressions IS 'Ad requests answered with an ad, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.impressions IS 'Ads rendered, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.measurable_impressions IS 'Impressions whose viewability could be measured, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.viewable_impressions IS 'Measurable impressions seen by the user (viewable), summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.fill_rate IS 'filled_impressions / ad_requests of the day''s sums (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.viewability_rate IS 'viewable_impressions / measurable_impressions of the day''s sums (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.loaded_at IS 'When the newest row of the group was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_campaign_daily.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE TABLE adops.creatives (
    creative_id bigint NOT NULL,
    campaign_id bigint NOT NULL,
    name text,
    ad_type text,
    is_active boolean,
    account_id_created bigint,
    account_id_modified bigint,
    created timestamp with time zone,
    modified timestamp with time zone,
    weight integer,
    delivery_start timestamp with time zone,
    delivery_end timestamp with time zone,
    thumbnail_color text,
    thumbnail_filehash text,
    data_width integer,
    data_height integer,
    data_filehash text,
    data_landing_page text,
    data jsonb,
    targeting jsonb,
    raw jsonb NOT NULL,
    synced_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone,
    account text DEFAULT 'default'::text NOT NULL
);
COMMENT ON TABLE adops.creatives IS 'Creative catalogue from GET /campaigns/{id}/creatives; soft-deleted via deleted_at.';
COMMENT ON COLUMN adops.creatives.creative_id IS 'Creative id (bigint), unique within an account; joins report_<name>.creative_id.';
COMMENT ON COLUMN adops.creatives.campaign_id IS 'The campaign the creative belongs to.';
COMMENT ON COLUMN adops.creatives.name IS 'Creative name as last synced.';
COMMENT ON COLUMN adops.creatives.ad_type IS 'Ad type of the creative (text).';
COMMENT ON COLUMN adops.creatives.is_active IS 'True when the creative is active on the ad server.';
COMMENT ON COLUMN adops.creatives.account_id_created IS 'Ad server user account that created the creative (bigint, the API''s account_id_created); not the account column.';
COMMENT ON COLUMN adops.creatives.account_id_modified IS 'Ad server user account that last modified the creative (bigint, the API''s account_id_modified); not the account column.';
COMMENT ON COLUMN adops.creatives.created IS 'When the creative was created on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN adops.creatives.modified IS 'When the creative was last modified on the ad server (timestamptz, from UNIX seconds); null when the API gave 0.';
COMMENT ON COLUMN adops.creatives.weight IS 'Delivery weight of the creative (integer); not additive.';
COMMENT ON COLUMN adops.creatives.delivery_start IS 'Start of delivery (timestamptz); null when unset (starts immediately).';
COMMENT ON COLUMN adops.creatives.delivery_end IS 'End of delivery (timestamptz); null when unset (runs without end).';
COMMENT ON COLUMN adops.creatives.thumbnail_color IS 'Average colour of the creative''s thumbnail, #rrggbb (text, thumbnail.average_color).';
COMMENT ON COLUMN adops.creatives.thumbnail_filehash IS 'File name of the creative''s thumbnail on the ad server (text, thumbnail.filehash).';
COMMENT ON COLUMN adops.creatives.data_width IS 'Width in pixels.';
COMMENT ON COLUMN adops.creatives.data_height IS 'Height in pixels.';
COMMENT ON COLUMN adops.creatives.data_filehash IS 'File name of the creative''s media on the ad server (text, data.filehash).';
COMMENT ON COLUMN adops.creatives.data_landing_page IS 'Landing page URL of the creative (text, data.landing_page); null or empty when it has none.';
COMMENT ON COLUMN adops.creatives.data IS 'The creative''s data object as returned (jsonb): filehash, width, height, landing_page and, per ad type, more.';
COMMENT ON COLUMN adops.creatives.targeting IS 'NULL when the API returns [] (unset).';
COMMENT ON COLUMN adops.creatives.raw IS 'The whole creative object as returned by the API.';
COMMENT ON COLUMN adops.creatives.synced_at IS 'When adops sync last saw the creative (timestamptz).';
COMMENT ON COLUMN adops.creatives.deleted_at IS 'When the creative disappeared from the ad server (soft delete); null while it exists.';
COMMENT ON COLUMN adops.creatives.account IS 'The ad server account the creative belongs to.';
CREATE TABLE adops.report_daily_creative (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    creative_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL
)
PARTITION BY RANGE (period_start);
COMMENT ON TABLE adops.report_daily_creative IS 'Report daily_creative as pulled from the ad server API: one row per account, period and dimension values; counters (ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions) are counts to sum. Dashboards read bi_daily_creative instead.';
COMMENT ON COLUMN adops.report_daily_creative.period_start IS 'First day of the period the row was pulled for (date, inclusive: the pull date_from).';
COMMENT ON COLUMN adops.report_daily_creative.period_end IS 'Last day of the period the row was pulled for (date, inclusive: the pull date_until).';
COMMENT ON COLUMN adops.report_daily_creative.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.report_daily_creative.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes.';
COMMENT ON COLUMN adops.report_daily_creative.creative_id IS 'Creative id (bigint); join creatives ON (account, creative_id) for its attributes.';
COMMENT ON COLUMN adops.report_daily_creative.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_creative.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_creative.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_creative.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_creative.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_creative.load_id IS 'The report_loads row of the pull that loaded this period (bigint); not additive.';
COMMENT ON COLUMN adops.report_daily_creative.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.report_daily_creative.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
CREATE VIEW adops.bi_daily_creative AS
 SELECT r.account,
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
    ((r.filled_impressions)::double precision / (NULLIF(r.ad_requests, 0))::double precision) AS fill_rate,
    ((r.viewable_impressions)::double precision / (NULLIF(r.measurable_impressions, 0))::double precision) AS viewability_rate,
    r.loaded_at,
    (r.load_id IN ( SELECT report_loads.load_id
           FROM adops.report_loads
          WHERE report_loads.provisional)) AS provisional
   FROM ((adops.report_daily_creative r
     LEFT JOIN adops.campaigns c ON (((c.account = r.account) AND (c.campaign_id = r.campaign_id))))
     LEFT JOIN adops.creatives k ON (((k.account = r.account) AND (k.creative_id = r.creative_id))));
COMMENT ON VIEW adops.bi_daily_creative IS 'BI view of report daily_creative: its rows with campaign/creative names and per-row fill_rate and viewability_rate. Sum the counters; compute rates as ratios of sums, never average them.';
COMMENT ON COLUMN adops.bi_daily_creative.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_creative.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_creative.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes.';
COMMENT ON COLUMN adops.bi_daily_creative.campaign_name IS 'Campaign name from the catalogue (campaigns.name as last synced; kept after deletion); null until adops sync saw the campaign.';
COMMENT ON COLUMN adops.bi_daily_creative.ad_format IS 'Ad format (text).';
COMMENT ON COLUMN adops.bi_daily_creative.creative_id IS 'Creative id (bigint); join creatives ON (account, creative_id) for its attributes.';
COMMENT ON COLUMN adops.bi_daily_creative.creative_name IS 'Creative name from the catalogue (creatives.name as last synced); null until adops sync saw it.';
COMMENT ON COLUMN adops.bi_daily_creative.ad_type IS 'Ad type of the creative (text, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_creative.data_width IS 'Width of the creative in pixels (from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_creative.data_height IS 'Height of the creative in pixels (from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_creative.creative_deleted IS 'True when the creative is gone from the ad server (soft-deleted in creatives).';
COMMENT ON COLUMN adops.bi_daily_creative.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative.fill_rate IS 'filled_impressions / ad_requests of this row (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_creative.viewability_rate IS 'viewable_impressions / measurable_impressions of this row (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_creative.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_creative.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE VIEW adops.bi_daily_creative_daily AS
 SELECT v.day,
    v.account,
    v.campaign_id,
    v.campaign_name,
    v.ad_format,
    v.creative_id,
    v.creative_name,
    v.ad_type,
    v.data_width,
    v.data_height,
    v.creative_deleted,
    (sum(v.ad_requests))::bigint AS ad_requests,
    (sum(v.filled_impressions))::bigint AS filled_impressions,
    (sum(v.impressions))::bigint AS impressions,
    (sum(v.measurable_impressions))::bigint AS measurable_impressions,
    (sum(v.viewable_impressions))::bigint AS viewable_impressions,
    ((sum(v.filled_impressions))::double precision / (NULLIF(sum(v.ad_requests), (0)::numeric))::double precision) AS fill_rate,
    ((sum(v.viewable_impressions))::double precision / (NULLIF(sum(v.measurable_impressions), (0)::numeric))::double precision) AS viewability_rate,
    max(v.loaded_at) AS loaded_at,
    bool_or(v.provisional) AS provisional
   FROM adops.bi_daily_creative v
  GROUP BY v.day, v.account, v.campaign_id, v.campaign_name, v.ad_format, v.creative_id, v.creative_name, v.ad_type, v.data_width, v.data_height, v.creative_deleted;
COMMENT ON VIEW adops.bi_daily_creative_daily IS 'bi_daily_creative summed per day and per its other columns, rates computed as ratios of the day''s sums. Sum its counters over days; never average its rates.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.campaign_id IS 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.campaign_name IS 'Campaign name from the catalogue (campaigns.name as last synced; kept after deletion); null until adops sync saw the campaign.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.ad_format IS 'Ad format (text).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.creative_id IS 'Creative id (bigint); join creatives ON (account, creative_id) for its attributes.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.creative_name IS 'Creative name from the catalogue (creatives.name as last synced); null until adops sync saw it.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.ad_type IS 'Ad type of the creative (text, from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.data_width IS 'Width of the creative in pixels (from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.data_height IS 'Height of the creative in pixels (from the catalogue).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.creative_deleted IS 'True when the creative is gone from the ad server (soft-deleted in creatives).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.ad_requests IS 'Ad requests received, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.filled_impressions IS 'Ad requests answered with an ad, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.impressions IS 'Ads rendered, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.measurable_impressions IS 'Impressions whose viewability could be measured, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.viewable_impressions IS 'Measurable impressions seen by the user (viewable), summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.fill_rate IS 'filled_impressions / ad_requests of the day''s sums (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.viewability_rate IS 'viewable_impressions / measurable_impressions of the day''s sums (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_creative_daily.loaded_at IS 'When the newest row of the group was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_creative_daily.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE TABLE adops.report_daily_geo_device (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    country text NOT NULL,
    device text NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL
)
PARTITION BY RANGE (period_start);
COMMENT ON TABLE adops.report_daily_geo_device IS 'Report daily_geo_device as pulled from the ad server API: one row per account, period and dimension values; counters (ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions) are counts to sum. Dashboards read bi_daily_geo_device instead.';
COMMENT ON COLUMN adops.report_daily_geo_device.period_start IS 'First day of the period the row was pulled for (date, inclusive: the pull date_from).';
COMMENT ON COLUMN adops.report_daily_geo_device.period_end IS 'Last day of the period the row was pulled for (date, inclusive: the pull date_until).';
COMMENT ON COLUMN adops.report_daily_geo_device.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.report_daily_geo_device.country IS 'Country of the viewer (text, as the API returns it).';
COMMENT ON COLUMN adops.report_daily_geo_device.device IS 'Device class of the viewer, e.g. desktop, mobile, tablet (text).';
COMMENT ON COLUMN adops.report_daily_geo_device.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_geo_device.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_geo_device.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_geo_device.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_geo_device.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_geo_device.load_id IS 'The report_loads row of the pull that loaded this period (bigint); not additive.';
COMMENT ON COLUMN adops.report_daily_geo_device.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.report_daily_geo_device.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
CREATE VIEW adops.bi_daily_geo_device AS
 SELECT r.account,
    r.day,
    r.country,
    r.device,
    r.ad_requests,
    r.filled_impressions,
    r.impressions,
    r.measurable_impressions,
    r.viewable_impressions,
    ((r.filled_impressions)::double precision / (NULLIF(r.ad_requests, 0))::double precision) AS fill_rate,
    ((r.viewable_impressions)::double precision / (NULLIF(r.measurable_impressions, 0))::double precision) AS viewability_rate,
    r.loaded_at,
    (r.load_id IN ( SELECT report_loads.load_id
           FROM adops.report_loads
          WHERE report_loads.provisional)) AS provisional
   FROM adops.report_daily_geo_device r;
COMMENT ON VIEW adops.bi_daily_geo_device IS 'BI view of report daily_geo_device: its rows with campaign/creative names and per-row fill_rate and viewability_rate. Sum the counters; compute rates as ratios of sums, never average them.';
COMMENT ON COLUMN adops.bi_daily_geo_device.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_geo_device.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_geo_device.country IS 'Country of the viewer (text, as the API returns it).';
COMMENT ON COLUMN adops.bi_daily_geo_device.device IS 'Device class of the viewer, e.g. desktop, mobile, tablet (text).';
COMMENT ON COLUMN adops.bi_daily_geo_device.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device.fill_rate IS 'filled_impressions / ad_requests of this row (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_geo_device.viewability_rate IS 'viewable_impressions / measurable_impressions of this row (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_geo_device.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_geo_device.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE VIEW adops.bi_daily_geo_device_daily AS
 SELECT v.day,
    v.account,
    v.country,
    v.device,
    (sum(v.ad_requests))::bigint AS ad_requests,
    (sum(v.filled_impressions))::bigint AS filled_impressions,
    (sum(v.impressions))::bigint AS impressions,
    (sum(v.measurable_impressions))::bigint AS measurable_impressions,
    (sum(v.viewable_impressions))::bigint AS viewable_impressions,
    ((sum(v.filled_impressions))::double precision / (NULLIF(sum(v.ad_requests), (0)::numeric))::double precision) AS fill_rate,
    ((sum(v.viewable_impressions))::double precision / (NULLIF(sum(v.measurable_impressions), (0)::numeric))::double precision) AS viewability_rate,
    max(v.loaded_at) AS loaded_at,
    bool_or(v.provisional) AS provisional
   FROM adops.bi_daily_geo_device v
  GROUP BY v.day, v.account, v.country, v.device;
COMMENT ON VIEW adops.bi_daily_geo_device_daily IS 'bi_daily_geo_device summed per day and per its other columns, rates computed as ratios of the day''s sums. Sum its counters over days; never average its rates.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.country IS 'Country of the viewer (text, as the API returns it).';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.device IS 'Device class of the viewer, e.g. desktop, mobile, tablet (text).';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.ad_requests IS 'Ad requests received, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.filled_impressions IS 'Ad requests answered with an ad, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.impressions IS 'Ads rendered, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.measurable_impressions IS 'Impressions whose viewability could be measured, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.viewable_impressions IS 'Measurable impressions seen by the user (viewable), summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.fill_rate IS 'filled_impressions / ad_requests of the day''s sums (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.viewability_rate IS 'viewable_impressions / measurable_impressions of the day''s sums (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.loaded_at IS 'When the newest row of the group was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_geo_device_daily.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE TABLE adops.campaign_zones (
    campaign_id bigint NOT NULL,
    zone_id bigint NOT NULL,
    account text DEFAULT 'default'::text NOT NULL
);
COMMENT ON TABLE adops.campaign_zones IS 'Campaign x zone, from campaigns.zone_ids as last seen.';
COMMENT ON COLUMN adops.campaign_zones.campaign_id IS 'Campaign id.';
COMMENT ON COLUMN adops.campaign_zones.zone_id IS 'A zone (placement) the campaign is set to run in.';
COMMENT ON COLUMN adops.campaign_zones.account IS 'The ad server account.';
CREATE TABLE adops.report_daily_zone (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    zone_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL
)
PARTITION BY RANGE (period_start);
COMMENT ON TABLE adops.report_daily_zone IS 'Report daily_zone as pulled from the ad server API: one row per account, period and dimension values; counters (ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions) are counts to sum. Dashboards read bi_daily_zone instead.';
COMMENT ON COLUMN adops.report_daily_zone.period_start IS 'First day of the period the row was pulled for (date, inclusive: the pull date_from).';
COMMENT ON COLUMN adops.report_daily_zone.period_end IS 'Last day of the period the row was pulled for (date, inclusive: the pull date_until).';
COMMENT ON COLUMN adops.report_daily_zone.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.report_daily_zone.zone_id IS 'Zone (ad placement) id (bigint).';
COMMENT ON COLUMN adops.report_daily_zone.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_zone.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_zone.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_zone.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_zone.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_daily_zone.load_id IS 'The report_loads row of the pull that loaded this period (bigint); not additive.';
COMMENT ON COLUMN adops.report_daily_zone.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.report_daily_zone.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
CREATE VIEW adops.bi_daily_zone AS
 SELECT r.account,
    r.day,
    r.zone_id,
    COALESCE(z.campaigns_assigned, (0)::bigint) AS campaigns_assigned,
    r.ad_requests,
    r.filled_impressions,
    r.impressions,
    r.measurable_impressions,
    r.viewable_impressions,
    ((r.filled_impressions)::double precision / (NULLIF(r.ad_requests, 0))::double precision) AS fill_rate,
    ((r.viewable_impressions)::double precision / (NULLIF(r.measurable_impressions, 0))::double precision) AS viewability_rate,
    r.loaded_at,
    (r.load_id IN ( SELECT report_loads.load_id
           FROM adops.report_loads
          WHERE report_loads.provisional)) AS provisional
   FROM (adops.report_daily_zone r
     LEFT JOIN ( SELECT cz.account,
            cz.zone_id,
            count(*) AS campaigns_assigned
           FROM (adops.campaign_zones cz
             JOIN adops.campaigns c ON (((c.account = cz.account) AND (c.campaign_id = cz.campaign_id) AND (c.deleted_at IS NULL))))
          GROUP BY cz.account, cz.zone_id) z ON (((z.account = r.account) AND (z.zone_id = r.zone_id))));
COMMENT ON VIEW adops.bi_daily_zone IS 'BI view of report daily_zone: its rows with campaign/creative names and per-row fill_rate and viewability_rate. Sum the counters; compute rates as ratios of sums, never average them.';
COMMENT ON COLUMN adops.bi_daily_zone.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_zone.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_zone.zone_id IS 'Zone (ad placement) id (bigint).';
COMMENT ON COLUMN adops.bi_daily_zone.campaigns_assigned IS 'Campaigns assigned to the zone and not deleted, from campaign_zones as last synced (count, bigint); an attribute of the zone, the same on each of its rows: never sum it across rows or days.';
COMMENT ON COLUMN adops.bi_daily_zone.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone.fill_rate IS 'filled_impressions / ad_requests of this row (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_zone.viewability_rate IS 'viewable_impressions / measurable_impressions of this row (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_zone.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_zone.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE VIEW adops.bi_daily_zone_daily AS
 SELECT v.day,
    v.account,
    v.zone_id,
    v.campaigns_assigned,
    (sum(v.ad_requests))::bigint AS ad_requests,
    (sum(v.filled_impressions))::bigint AS filled_impressions,
    (sum(v.impressions))::bigint AS impressions,
    (sum(v.measurable_impressions))::bigint AS measurable_impressions,
    (sum(v.viewable_impressions))::bigint AS viewable_impressions,
    ((sum(v.filled_impressions))::double precision / (NULLIF(sum(v.ad_requests), (0)::numeric))::double precision) AS fill_rate,
    ((sum(v.viewable_impressions))::double precision / (NULLIF(sum(v.measurable_impressions), (0)::numeric))::double precision) AS viewability_rate,
    max(v.loaded_at) AS loaded_at,
    bool_or(v.provisional) AS provisional
   FROM adops.bi_daily_zone v
  GROUP BY v.day, v.account, v.zone_id, v.campaigns_assigned;
COMMENT ON VIEW adops.bi_daily_zone_daily IS 'bi_daily_zone summed per day and per its other columns, rates computed as ratios of the day''s sums. Sum its counters over days; never average its rates.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.zone_id IS 'Zone (ad placement) id (bigint).';
COMMENT ON COLUMN adops.bi_daily_zone_daily.campaigns_assigned IS 'Campaigns assigned to the zone and not deleted, from campaign_zones as last synced (count, bigint); an attribute of the zone, the same on each of its rows: never sum it across rows or days.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.ad_requests IS 'Ad requests received, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.filled_impressions IS 'Ad requests answered with an ad, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.impressions IS 'Ads rendered, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.measurable_impressions IS 'Impressions whose viewability could be measured, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.viewable_impressions IS 'Measurable impressions seen by the user (viewable), summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.fill_rate IS 'filled_impressions / ad_requests of the day''s sums (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_daily_zone_daily.viewability_rate IS 'viewable_impressions / measurable_impressions of the day''s sums (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_daily_zone_daily.loaded_at IS 'When the newest row of the group was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_daily_zone_daily.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE TABLE adops.report_hourly (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    hour smallint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL
)
PARTITION BY RANGE (period_start);
COMMENT ON TABLE adops.report_hourly IS 'Report hourly as pulled from the ad server API: one row per account, period and dimension values; counters (ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions) are counts to sum. Dashboards read bi_hourly instead.';
COMMENT ON COLUMN adops.report_hourly.period_start IS 'First day of the period the row was pulled for (date, inclusive: the pull date_from).';
COMMENT ON COLUMN adops.report_hourly.period_end IS 'Last day of the period the row was pulled for (date, inclusive: the pull date_until).';
COMMENT ON COLUMN adops.report_hourly.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.report_hourly.hour IS 'Hour of the day, 0 to 23 (smallint).';
COMMENT ON COLUMN adops.report_hourly.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_hourly.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_hourly.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_hourly.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_hourly.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.report_hourly.load_id IS 'The report_loads row of the pull that loaded this period (bigint); not additive.';
COMMENT ON COLUMN adops.report_hourly.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.report_hourly.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
CREATE VIEW adops.bi_hourly AS
 SELECT r.account,
    r.day,
    r.hour,
    r.ad_requests,
    r.filled_impressions,
    r.impressions,
    r.measurable_impressions,
    r.viewable_impressions,
    ((r.filled_impressions)::double precision / (NULLIF(r.ad_requests, 0))::double precision) AS fill_rate,
    ((r.viewable_impressions)::double precision / (NULLIF(r.measurable_impressions, 0))::double precision) AS viewability_rate,
    r.loaded_at,
    (r.load_id IN ( SELECT report_loads.load_id
           FROM adops.report_loads
          WHERE report_loads.provisional)) AS provisional
   FROM adops.report_hourly r;
COMMENT ON VIEW adops.bi_hourly IS 'BI view of report hourly: its rows with campaign/creative names and per-row fill_rate and viewability_rate. Sum the counters; compute rates as ratios of sums, never average them.';
COMMENT ON COLUMN adops.bi_hourly.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_hourly.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_hourly.hour IS 'Hour of the day, 0 to 23 (smallint).';
COMMENT ON COLUMN adops.bi_hourly.ad_requests IS 'Ad requests received (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly.filled_impressions IS 'Ad requests answered with an ad (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly.impressions IS 'Ads rendered (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly.measurable_impressions IS 'Impressions whose viewability could be measured (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly.viewable_impressions IS 'Measurable impressions seen by the user (viewable) (count, bigint). A counter: sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly.fill_rate IS 'filled_impressions / ad_requests of this row (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_hourly.viewability_rate IS 'viewable_impressions / measurable_impressions of this row (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_hourly.loaded_at IS 'When the period of this row was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_hourly.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE VIEW adops.bi_hourly_daily AS
 SELECT v.day,
    v.account,
    (sum(v.ad_requests))::bigint AS ad_requests,
    (sum(v.filled_impressions))::bigint AS filled_impressions,
    (sum(v.impressions))::bigint AS impressions,
    (sum(v.measurable_impressions))::bigint AS measurable_impressions,
    (sum(v.viewable_impressions))::bigint AS viewable_impressions,
    ((sum(v.filled_impressions))::double precision / (NULLIF(sum(v.ad_requests), (0)::numeric))::double precision) AS fill_rate,
    ((sum(v.viewable_impressions))::double precision / (NULLIF(sum(v.measurable_impressions), (0)::numeric))::double precision) AS viewability_rate,
    max(v.loaded_at) AS loaded_at,
    bool_or(v.provisional) AS provisional
   FROM adops.bi_hourly v
  GROUP BY v.day, v.account;
COMMENT ON VIEW adops.bi_hourly_daily IS 'bi_hourly summed per day and per its other columns, rates computed as ratios of the day''s sums. Sum its counters over days; never average its rates.';
COMMENT ON COLUMN adops.bi_hourly_daily.day IS 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday.';
COMMENT ON COLUMN adops.bi_hourly_daily.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it.';
COMMENT ON COLUMN adops.bi_hourly_daily.ad_requests IS 'Ad requests received, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly_daily.filled_impressions IS 'Ad requests answered with an ad, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly_daily.impressions IS 'Ads rendered, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly_daily.measurable_impressions IS 'Impressions whose viewability could be measured, summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly_daily.viewable_impressions IS 'Measurable impressions seen by the user (viewable), summed over the day (count, bigint). Sum it across rows, days and dimensions.';
COMMENT ON COLUMN adops.bi_hourly_daily.fill_rate IS 'filled_impressions / ad_requests of the day''s sums (ratio 0..1; null when ad_requests is 0). Never average it: over several rows use sum(filled_impressions)::float / nullif(sum(ad_requests), 0).';
COMMENT ON COLUMN adops.bi_hourly_daily.viewability_rate IS 'viewable_impressions / measurable_impressions of the day''s sums (ratio 0..1; null when measurable_impressions is 0). Never average it: over several rows use sum(viewable_impressions)::float / nullif(sum(measurable_impressions), 0).';
COMMENT ON COLUMN adops.bi_hourly_daily.loaded_at IS 'When the newest row of the group was loaded (timestamptz); take max(), never sum.';
COMMENT ON COLUMN adops.bi_hourly_daily.provisional IS 'True when the row''s period had not ended when it was pulled (today, in the report''s time zone): its counts grow with each refresh until the pull after the period''s end makes them final. NOT provisional: final figures only.';
CREATE TABLE adops.campaigns_history (
    campaign_id bigint NOT NULL,
    name text,
    is_active boolean,
    is_archived boolean,
    delivery_start timestamp with time zone,
    delivery_end timestamp with time zone,
    deleted boolean NOT NULL,
    valid_from timestamp with time zone NOT NULL,
    valid_to timestamp with time zone,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT campaigns_history_check CHECK (((valid_to IS NULL) OR (valid_to > valid_from)))
);
COMMENT ON TABLE adops.campaigns_history IS 'One row per version of a campaign''s name, status and delivery; current version: valid_to IS NULL.';
COMMENT ON COLUMN adops.campaigns_history.campaign_id IS 'Campaign id (bigint); joins campaigns and report_<name>.campaign_id within the account.';
COMMENT ON COLUMN adops.campaigns_history.name IS 'Campaign name in this version.';
COMMENT ON COLUMN adops.campaigns_history.is_active IS 'Whether the campaign was active on the ad server in this version.';
COMMENT ON COLUMN adops.campaigns_history.is_archived IS 'Whether the campaign was archived in this version.';
COMMENT ON COLUMN adops.campaigns_history.delivery_start IS 'Start of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN adops.campaigns_history.delivery_end IS 'End of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN adops.campaigns_history.deleted IS 'True for the version that began when the campaign disappeared from the ad server (soft delete).';
COMMENT ON COLUMN adops.campaigns_history.valid_from IS 'Inclusive start: when this version was first synced (timestamptz).';
COMMENT ON COLUMN adops.campaigns_history.valid_to IS 'Exclusive end: the version holds for valid_from <= t < valid_to.';
COMMENT ON COLUMN adops.campaigns_history.account IS 'The ad server account of the campaign; join campaigns ON (account, campaign_id).';
CREATE TABLE adops.creatives_history (
    creative_id bigint NOT NULL,
    campaign_id bigint NOT NULL,
    name text,
    is_active boolean,
    delivery_start timestamp with time zone,
    delivery_end timestamp with time zone,
    deleted boolean NOT NULL,
    valid_from timestamp with time zone NOT NULL,
    valid_to timestamp with time zone,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT creatives_history_check CHECK (((valid_to IS NULL) OR (valid_to > valid_from)))
);
COMMENT ON TABLE adops.creatives_history IS 'One row per version of a creative''s name, status and delivery; current version: valid_to IS NULL.';
COMMENT ON COLUMN adops.creatives_history.creative_id IS 'Creative id (bigint); joins creatives and report_<name>.creative_id within the account.';
COMMENT ON COLUMN adops.creatives_history.campaign_id IS 'The campaign the creative belonged to in this version (bigint).';
COMMENT ON COLUMN adops.creatives_history.name IS 'Creative name in this version.';
COMMENT ON COLUMN adops.creatives_history.is_active IS 'Whether the creative was active on the ad server in this version.';
COMMENT ON COLUMN adops.creatives_history.delivery_start IS 'Start of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN adops.creatives_history.delivery_end IS 'End of delivery in this version (timestamptz); null when unset.';
COMMENT ON COLUMN adops.creatives_history.deleted IS 'True for the version that began when the creative disappeared from the ad server (soft delete).';
COMMENT ON COLUMN adops.creatives_history.valid_from IS 'Inclusive start: when this version was first synced (timestamptz).';
COMMENT ON COLUMN adops.creatives_history.valid_to IS 'Exclusive end: the version holds for valid_from <= t < valid_to.';
COMMENT ON COLUMN adops.creatives_history.account IS 'The ad server account of the creative; join creatives ON (account, creative_id).';
CREATE TABLE adops.dashboard_roles (
    role text NOT NULL,
    granted_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dashboard_roles_role_check CHECK ((role ~ '^[a-z_][a-z0-9_]{0,62}$'::text))
);
COMMENT ON TABLE adops.dashboard_roles IS 'Read-only BI roles set up by adops migrate --bi-role: SELECT on the bi_ views, dim_date and the catalogue, granted again whenever the views are made.';
CREATE TABLE adops.dim_date (
    date date NOT NULL,
    year smallint NOT NULL,
    quarter smallint NOT NULL,
    month smallint NOT NULL,
    month_name text NOT NULL,
    day_of_month smallint NOT NULL,
    iso_year smallint NOT NULL,
    iso_week smallint NOT NULL,
    iso_weekday smallint NOT NULL,
    weekday_name text NOT NULL,
    is_weekend boolean NOT NULL,
    week_start date NOT NULL,
    month_start date NOT NULL,
    quarter_start date NOT NULL,
    year_month text NOT NULL,
    iso_year_week text NOT NULL,
    CONSTRAINT dim_date_iso_week_check CHECK (((iso_week >= 1) AND (iso_week <= 53))),
    CONSTRAINT dim_date_iso_weekday_check CHECK (((iso_weekday >= 1) AND (iso_weekday <= 7))),
    CONSTRAINT dim_date_month_check CHECK (((month >= 1) AND (month <= 12))),
    CONSTRAINT dim_date_quarter_check CHECK (((quarter >= 1) AND (quarter <= 4)))
);
COMMENT ON TABLE adops.dim_date IS 'One row per day 2000-01-01..2100-12-31: join bi_<name>.day = dim_date.date to group by ISO week, month, quarter or weekday.';
COMMENT ON COLUMN adops.dim_date.date IS 'The day (date); join bi_<name>.day = dim_date.date.';
COMMENT ON COLUMN adops.dim_date.year IS 'Calendar year (smallint).';
COMMENT ON COLUMN adops.dim_date.quarter IS 'Calendar quarter, 1 to 4.';
COMMENT ON COLUMN adops.dim_date.month IS 'Calendar month, 1 to 12.';
COMMENT ON COLUMN adops.dim_date.month_name IS 'English month name, e.g. January.';
COMMENT ON COLUMN adops.dim_date.day_of_month IS 'Day of the month, 1 to 31.';
COMMENT ON COLUMN adops.dim_date.iso_year IS 'ISO 8601 week-numbering year: early January days may belong to the previous one, late December days to the next.';
COMMENT ON COLUMN adops.dim_date.iso_week IS 'ISO 8601 week number, 1 to 53 (group with iso_year, not year).';
COMMENT ON COLUMN adops.dim_date.iso_weekday IS '1 = Monday .. 7 = Sunday.';
COMMENT ON COLUMN adops.dim_date.weekday_name IS 'English weekday name, e.g. Monday.';
COMMENT ON COLUMN adops.dim_date.is_weekend IS 'True on Saturday and Sunday.';
COMMENT ON COLUMN adops.dim_date.week_start IS 'Monday of the ISO week.';
COMMENT ON COLUMN adops.dim_date.month_start IS 'First day of the month (date): group by it for monthly series.';
COMMENT ON COLUMN adops.dim_date.quarter_start IS 'First day of the quarter (date).';
COMMENT ON COLUMN adops.dim_date.year_month IS 'e.g. 2026-01; sorts in calendar order.';
COMMENT ON COLUMN adops.dim_date.iso_year_week IS 'e.g. 2026-W01; sorts in calendar order.';
CREATE UNLOGGED TABLE adops.entity_sync_pages (
    run_id text NOT NULL,
    listing bigint NOT NULL,
    page_offset integer NOT NULL,
    items jsonb NOT NULL,
    size integer NOT NULL,
    last boolean NOT NULL,
    gone boolean DEFAULT false NOT NULL
);
COMMENT ON TABLE adops.entity_sync_pages IS 'Pages a running catalogue sync has read (its checkpoint); dropped when the run is written.';
COMMENT ON COLUMN adops.entity_sync_pages.listing IS '0: GET /campaigns; otherwise the campaign id of GET /campaigns/{id}/creatives.';
COMMENT ON COLUMN adops.entity_sync_pages.items IS 'The page''s items as returned, minus those earlier pages of the listing already had.';
COMMENT ON COLUMN adops.entity_sync_pages.gone IS 'The creative listing answered 404: the campaign was deleted during the sync.';
CREATE TABLE adops.entity_sync_runs (
    run_id text NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    tries integer DEFAULT 1 NOT NULL,
    requests bigint DEFAULT 0 NOT NULL,
    campaigns_total integer,
    campaigns_done integer DEFAULT 0 NOT NULL,
    result jsonb,
    problem_count integer DEFAULT 0 NOT NULL,
    problems jsonb,
    error text,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT entity_sync_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'written'::text, 'failed'::text])))
);
COMMENT ON TABLE adops.entity_sync_runs IS 'One row per catalogue sync (adops sync): progress, result, unreadable fields.';
COMMENT ON COLUMN adops.entity_sync_runs.run_id IS 'The BullMQ job id of a queued sync (its retries and stall recoveries share it), or d-... for --direct.';
COMMENT ON COLUMN adops.entity_sync_runs.tries IS 'Times the run was started: more than 1 when it resumed from its checkpoint.';
COMMENT ON COLUMN adops.entity_sync_runs.problems IS 'Fields that could not be read: {count, skipped, byField, examples (the first 100)}.';
CREATE SEQUENCE adops.fetch_tokens
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
CREATE TABLE adops.freshness_states (
    account text NOT NULL,
    report text NOT NULL,
    state text NOT NULL,
    previous text,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT freshness_states_state_check CHECK ((state = ANY (ARRAY['late'::text, 'fresh'::text])))
);
COMMENT ON TABLE adops.freshness_states IS 'Last freshness state of each report seen by the webhook worker (report.late, report.fresh).';
CREATE TABLE adops.report_daily_campaign__p202601 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-01-01'::date) AND (day < '2026-02-07'::date)))
);
COMMENT ON TABLE adops.report_daily_campaign__p202601 IS 'The rows of report_daily_campaign whose period_start falls in the month of 2026-01-01 (a partition): read report_daily_campaign, not this.';
CREATE TABLE adops.report_daily_campaign__p202602 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-02-01'::date) AND (day < '2026-03-07'::date)))
);
COMMENT ON TABLE adops.report_daily_campaign__p202602 IS 'The rows of report_daily_campaign whose period_start falls in the month of 2026-02-01 (a partition): read report_daily_campaign, not this.';
CREATE TABLE adops.report_daily_campaign__p202603 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-03-01'::date) AND (day < '2026-04-07'::date)))
);
COMMENT ON TABLE adops.report_daily_campaign__p202603 IS 'The rows of report_daily_campaign whose period_start falls in the month of 2026-03-01 (a partition): read report_daily_campaign, not this.';
CREATE TABLE adops.report_daily_creative__p202601 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    creative_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-01-01'::date) AND (day < '2026-02-07'::date)))
);
COMMENT ON TABLE adops.report_daily_creative__p202601 IS 'The rows of report_daily_creative whose period_start falls in the month of 2026-01-01 (a partition): read report_daily_creative, not this.';
CREATE TABLE adops.report_daily_creative__p202602 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    creative_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-02-01'::date) AND (day < '2026-03-07'::date)))
);
COMMENT ON TABLE adops.report_daily_creative__p202602 IS 'The rows of report_daily_creative whose period_start falls in the month of 2026-02-01 (a partition): read report_daily_creative, not this.';
CREATE TABLE adops.report_daily_creative__p202603 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    campaign_id bigint NOT NULL,
    creative_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-03-01'::date) AND (day < '2026-04-07'::date)))
);
COMMENT ON TABLE adops.report_daily_creative__p202603 IS 'The rows of report_daily_creative whose period_start falls in the month of 2026-03-01 (a partition): read report_daily_creative, not this.';
CREATE TABLE adops.report_daily_geo_device__p202601 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    country text NOT NULL,
    device text NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-01-01'::date) AND (day < '2026-02-07'::date)))
);
COMMENT ON TABLE adops.report_daily_geo_device__p202601 IS 'The rows of report_daily_geo_device whose period_start falls in the month of 2026-01-01 (a partition): read report_daily_geo_device, not this.';
CREATE TABLE adops.report_daily_geo_device__p202602 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    country text NOT NULL,
    device text NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-02-01'::date) AND (day < '2026-03-07'::date)))
);
COMMENT ON TABLE adops.report_daily_geo_device__p202602 IS 'The rows of report_daily_geo_device whose period_start falls in the month of 2026-02-01 (a partition): read report_daily_geo_device, not this.';
CREATE TABLE adops.report_daily_geo_device__p202603 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    country text NOT NULL,
    device text NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-03-01'::date) AND (day < '2026-04-07'::date)))
);
COMMENT ON TABLE adops.report_daily_geo_device__p202603 IS 'The rows of report_daily_geo_device whose period_start falls in the month of 2026-03-01 (a partition): read report_daily_geo_device, not this.';
CREATE TABLE adops.report_daily_zone__p202601 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    zone_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-01-01'::date) AND (day < '2026-02-07'::date)))
);
COMMENT ON TABLE adops.report_daily_zone__p202601 IS 'The rows of report_daily_zone whose period_start falls in the month of 2026-01-01 (a partition): read report_daily_zone, not this.';
CREATE TABLE adops.report_daily_zone__p202602 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    zone_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-02-01'::date) AND (day < '2026-03-07'::date)))
);
COMMENT ON TABLE adops.report_daily_zone__p202602 IS 'The rows of report_daily_zone whose period_start falls in the month of 2026-02-01 (a partition): read report_daily_zone, not this.';
CREATE TABLE adops.report_daily_zone__p202603 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    zone_id bigint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-03-01'::date) AND (day < '2026-04-07'::date)))
);
COMMENT ON TABLE adops.report_daily_zone__p202603 IS 'The rows of report_daily_zone whose period_start falls in the month of 2026-03-01 (a partition): read report_daily_zone, not this.';
CREATE TABLE adops.report_hourly__p202601 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    hour smallint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-01-01'::date) AND (day < '2026-02-07'::date)))
);
COMMENT ON TABLE adops.report_hourly__p202601 IS 'The rows of report_hourly whose period_start falls in the month of 2026-01-01 (a partition): read report_hourly, not this.';
CREATE TABLE adops.report_hourly__p202602 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    hour smallint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-02-01'::date) AND (day < '2026-03-07'::date)))
);
COMMENT ON TABLE adops.report_hourly__p202602 IS 'The rows of report_hourly whose period_start falls in the month of 2026-02-01 (a partition): read report_hourly, not this.';
CREATE TABLE adops.report_hourly__p202603 (
    period_start date NOT NULL,
    period_end date NOT NULL,
    day date NOT NULL,
    hour smallint NOT NULL,
    ad_requests bigint NOT NULL,
    filled_impressions bigint NOT NULL,
    impressions bigint NOT NULL,
    measurable_impressions bigint NOT NULL,
    viewable_impressions bigint NOT NULL,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT day_in_partition CHECK (((day >= '2026-03-01'::date) AND (day < '2026-04-07'::date)))
);
COMMENT ON TABLE adops.report_hourly__p202603 IS 'The rows of report_hourly whose period_start falls in the month of 2026-03-01 (a partition): read report_hourly, not this.';
ALTER TABLE adops.report_loads ALTER COLUMN load_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME adops.report_loads_load_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE adops.report_raw (
    load_id bigint NOT NULL,
    body_gzip bytea,
    body_bytes bigint NOT NULL,
    body_sha256 text NOT NULL,
    archived_at timestamp with time zone DEFAULT now() NOT NULL,
    received_sha256 text NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    spool_id bigint,
    body bytea,
    CONSTRAINT report_raw_one_body CHECK ((num_nonnulls(body, body_gzip, spool_id) = 1))
);
ALTER TABLE ONLY adops.report_raw ALTER COLUMN body SET COMPRESSION lz4;
COMMENT ON TABLE adops.report_raw IS 'Raw API responses (gzip) kept for replay and audit, for a configured number of days. Not for BI: the read-only BI role cannot read it.';
COMMENT ON COLUMN adops.report_raw.body_gzip IS 'A body archived gzip-compressed: any whole body before 008_raw_body, a whole body over 8 MB since.';
COMMENT ON COLUMN adops.report_raw.body_sha256 IS 'SHA-256 of the stored body (the API key redacted), checked when the body is read back.';
COMMENT ON COLUMN adops.report_raw.received_sha256 IS 'SHA-256 of the body as received, before the API key was redacted from it.';
COMMENT ON COLUMN adops.report_raw.spool_id IS 'The parts of a streamed body in report_raw_parts; NULL when body or body_gzip holds the body.';
COMMENT ON COLUMN adops.report_raw.body IS 'The body as received, the API key redacted (compressed by Postgres); NULL when body_gzip or spool_id holds it.';
CREATE TABLE adops.report_raw_parts (
    account text DEFAULT 'default'::text NOT NULL,
    spool_id bigint NOT NULL,
    part integer NOT NULL,
    gzip bytea NOT NULL,
    written_at timestamp with time zone DEFAULT now() NOT NULL
);
COMMENT ON TABLE adops.report_raw_parts IS 'Streamed bodies, gzip-compressed, in parts (concatenated in part order they are one gzip stream).';
CREATE SEQUENCE adops.report_raw_spool_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
CREATE TABLE adops.report_totals (
    report text NOT NULL,
    period_start date NOT NULL,
    period_end date NOT NULL,
    ad_requests bigint,
    filled_impressions bigint,
    impressions bigint,
    measurable_impressions bigint,
    viewable_impressions bigint,
    load_id bigint NOT NULL,
    loaded_at timestamp with time zone NOT NULL,
    account text DEFAULT 'default'::text NOT NULL,
    retention_dropped_at timestamp with time zone,
    totals_source text DEFAULT 'api'::text NOT NULL,
    CONSTRAINT report_totals_totals_source_check CHECK ((totals_source = ANY (ARRAY['api'::text, 'rows'::text])))
);
COMMENT ON TABLE adops.report_totals IS 'The API''s totals of each report and period as returned (one row per account, report and period): what the rows of report_<name> for that period add up to. Sum the counters over periods; reports of one grain must agree (adops status).';
COMMENT ON COLUMN adops.report_totals.report IS 'The report (job definition name); its rows are in report_<report>.';
COMMENT ON COLUMN adops.report_totals.period_start IS 'First day of the period (date, inclusive).';
COMMENT ON COLUMN adops.report_totals.period_end IS 'Last day of the period (date, inclusive).';
COMMENT ON COLUMN adops.report_totals.ad_requests IS 'Ad requests received in the period (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN adops.report_totals.filled_impressions IS 'Ad requests answered with an ad (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN adops.report_totals.impressions IS 'Ads rendered (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN adops.report_totals.measurable_impressions IS 'Impressions whose viewability could be measured (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN adops.report_totals.viewable_impressions IS 'Measurable impressions seen by the user (count); null when the API gave no total. Sum it.';
COMMENT ON COLUMN adops.report_totals.load_id IS 'The report_loads row of the pull these totals came with.';
COMMENT ON COLUMN adops.report_totals.loaded_at IS 'When these totals were loaded (timestamptz); a later re-pull may restate them inside lookback_days.';
COMMENT ON COLUMN adops.report_totals.account IS 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account).';
COMMENT ON COLUMN adops.report_totals.retention_dropped_at IS 'When retention dropped the period''s rows (totals kept for history); null while the rows are there.';
COMMENT ON COLUMN adops.report_totals.totals_source IS 'Where the totals come from: api (the API''s totals of a request for this period alone) or rows (the sums of the period''s rows, its request having covered several periods: the API''s totals, covering them all, were reconciled against all their rows).';
CREATE TABLE adops.report_versions (
    report text NOT NULL,
    version integer NOT NULL,
    dimensions text[] NOT NULL,
    table_name text NOT NULL,
    state text NOT NULL,
    auto_swap boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    swapped_at timestamp with time zone,
    CONSTRAINT report_versions_state_check CHECK ((state = ANY (ARRAY['serving'::text, 'building'::text, 'retired'::text]))),
    CONSTRAINT report_versions_version_check CHECK ((version >= 1))
);
CREATE TABLE adops.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE ONLY adops.report_daily_campaign ATTACH PARTITION adops.report_daily_campaign__p202601 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
ALTER TABLE ONLY adops.report_daily_campaign ATTACH PARTITION adops.report_daily_campaign__p202602 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
ALTER TABLE ONLY adops.report_daily_campaign ATTACH PARTITION adops.report_daily_campaign__p202603 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE ONLY adops.report_daily_creative ATTACH PARTITION adops.report_daily_creative__p202601 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
ALTER TABLE ONLY adops.report_daily_creative ATTACH PARTITION adops.report_daily_creative__p202602 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
ALTER TABLE ONLY adops.report_daily_creative ATTACH PARTITION adops.report_daily_creative__p202603 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE ONLY adops.report_daily_geo_device ATTACH PARTITION adops.report_daily_geo_device__p202601 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
ALTER TABLE ONLY adops.report_daily_geo_device ATTACH PARTITION adops.report_daily_geo_device__p202602 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
ALTER TABLE ONLY adops.report_daily_geo_device ATTACH PARTITION adops.report_daily_geo_device__p202603 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE ONLY adops.report_daily_zone ATTACH PARTITION adops.report_daily_zone__p202601 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
ALTER TABLE ONLY adops.report_daily_zone ATTACH PARTITION adops.report_daily_zone__p202602 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
ALTER TABLE ONLY adops.report_daily_zone ATTACH PARTITION adops.report_daily_zone__p202603 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE ONLY adops.report_hourly ATTACH PARTITION adops.report_hourly__p202601 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
ALTER TABLE ONLY adops.report_hourly ATTACH PARTITION adops.report_hourly__p202602 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
ALTER TABLE ONLY adops.report_hourly ATTACH PARTITION adops.report_hourly__p202603 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE ONLY adops.announced_disagreements
    ADD CONSTRAINT announced_disagreements_pkey PRIMARY KEY (account, period_start, period_end, report, other_report, sums);
ALTER TABLE ONLY adops.announced_pacing
    ADD CONSTRAINT announced_pacing_pkey PRIMARY KEY (account, campaign_id, day);
ALTER TABLE ONLY adops.api_limits
    ADD CONSTRAINT api_limits_pkey PRIMARY KEY (key);
ALTER TABLE ONLY adops.campaign_zones
    ADD CONSTRAINT campaign_zones_pkey PRIMARY KEY (account, campaign_id, zone_id);
ALTER TABLE ONLY adops.campaigns_history
    ADD CONSTRAINT campaigns_history_pkey PRIMARY KEY (account, campaign_id, valid_from);
ALTER TABLE ONLY adops.campaigns
    ADD CONSTRAINT campaigns_pkey PRIMARY KEY (account, campaign_id);
ALTER TABLE ONLY adops.creatives_history
    ADD CONSTRAINT creatives_history_pkey PRIMARY KEY (account, creative_id, valid_from);
ALTER TABLE ONLY adops.creatives
    ADD CONSTRAINT creatives_pkey PRIMARY KEY (account, creative_id);
ALTER TABLE ONLY adops.dashboard_roles
    ADD CONSTRAINT dashboard_roles_pkey PRIMARY KEY (role);
ALTER TABLE ONLY adops.dim_date
    ADD CONSTRAINT dim_date_pkey PRIMARY KEY (date);
ALTER TABLE ONLY adops.entity_sync_pages
    ADD CONSTRAINT entity_sync_pages_pkey PRIMARY KEY (run_id, listing, page_offset);
ALTER TABLE ONLY adops.entity_sync_runs
    ADD CONSTRAINT entity_sync_runs_pkey PRIMARY KEY (run_id);
ALTER TABLE ONLY adops.freshness_states
    ADD CONSTRAINT freshness_states_pkey PRIMARY KEY (account, report);
ALTER TABLE ONLY adops.report_loads
    ADD CONSTRAINT report_loads_pkey PRIMARY KEY (account, load_id);
ALTER TABLE ONLY adops.report_raw_parts
    ADD CONSTRAINT report_raw_parts_pkey PRIMARY KEY (account, spool_id, part);
ALTER TABLE ONLY adops.report_raw
    ADD CONSTRAINT report_raw_pkey PRIMARY KEY (account, load_id);
ALTER TABLE ONLY adops.report_totals
    ADD CONSTRAINT report_totals_pkey PRIMARY KEY (account, report, period_start, period_end);
ALTER TABLE ONLY adops.report_versions
    ADD CONSTRAINT report_versions_pkey PRIMARY KEY (report, version);
ALTER TABLE ONLY adops.report_versions
    ADD CONSTRAINT report_versions_table_name_key UNIQUE (table_name);
ALTER TABLE ONLY adops.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);
CREATE INDEX campaign_zones_zone_idx ON adops.campaign_zones USING btree (account, zone_id);
CREATE UNIQUE INDEX campaigns_history_current ON adops.campaigns_history USING btree (account, campaign_id) WHERE (valid_to IS NULL);
CREATE INDEX creatives_campaign_idx ON adops.creatives USING btree (account, campaign_id);
CREATE UNIQUE INDEX creatives_history_current ON adops.creatives_history USING btree (account, creative_id) WHERE (valid_to IS NULL);
CREATE INDEX entity_sync_runs_account_idx ON adops.entity_sync_runs USING btree (account, started_at);
CREATE INDEX entity_sync_runs_started_idx ON adops.entity_sync_runs USING btree (started_at);
CREATE INDEX report_daily_campaign_campaign_id ON ONLY adops.report_daily_campaign USING btree (campaign_id);
CREATE INDEX report_daily_campaign__p202601_campaign_id_idx ON adops.report_daily_campaign__p202601 USING btree (campaign_id);
CREATE INDEX report_daily_campaign__p202602_campaign_id_idx ON adops.report_daily_campaign__p202602 USING btree (campaign_id);
CREATE INDEX report_daily_campaign__p202603_campaign_id_idx ON adops.report_daily_campaign__p202603 USING btree (campaign_id);
CREATE UNIQUE INDEX report_daily_campaign_key ON ONLY adops.report_daily_campaign USING btree (account, period_start, period_end, day, campaign_id);
CREATE UNIQUE INDEX report_daily_campaign__p20260_account_period_start_period__idx1 ON adops.report_daily_campaign__p202602 USING btree (account, period_start, period_end, day, campaign_id);
CREATE UNIQUE INDEX report_daily_campaign__p20260_account_period_start_period__idx2 ON adops.report_daily_campaign__p202603 USING btree (account, period_start, period_end, day, campaign_id);
CREATE UNIQUE INDEX report_daily_campaign__p20260_account_period_start_period_e_idx ON adops.report_daily_campaign__p202601 USING btree (account, period_start, period_end, day, campaign_id);
CREATE INDEX report_daily_creative_campaign_id ON ONLY adops.report_daily_creative USING btree (campaign_id);
CREATE INDEX report_daily_creative__p202601_campaign_id_idx ON adops.report_daily_creative__p202601 USING btree (campaign_id);
CREATE INDEX report_daily_creative_creative_id ON ONLY adops.report_daily_creative USING btree (creative_id);
CREATE INDEX report_daily_creative__p202601_creative_id_idx ON adops.report_daily_creative__p202601 USING btree (creative_id);
CREATE INDEX report_daily_creative__p202602_campaign_id_idx ON adops.report_daily_creative__p202602 USING btree (campaign_id);
CREATE INDEX report_daily_creative__p202602_creative_id_idx ON adops.report_daily_creative__p202602 USING btree (creative_id);
CREATE INDEX report_daily_creative__p202603_campaign_id_idx ON adops.report_daily_creative__p202603 USING btree (campaign_id);
CREATE INDEX report_daily_creative__p202603_creative_id_idx ON adops.report_daily_creative__p202603 USING btree (creative_id);
CREATE UNIQUE INDEX report_daily_creative_key ON ONLY adops.report_daily_creative USING btree (account, period_start, period_end, day, campaign_id, creative_id);
CREATE UNIQUE INDEX report_daily_creative__p20260_account_period_start_period__idx1 ON adops.report_daily_creative__p202602 USING btree (account, period_start, period_end, day, campaign_id, creative_id);
CREATE UNIQUE INDEX report_daily_creative__p20260_account_period_start_period__idx2 ON adops.report_daily_creative__p202603 USING btree (account, period_start, period_end, day, campaign_id, creative_id);
CREATE UNIQUE INDEX report_daily_creative__p20260_account_period_start_period_e_idx ON adops.report_daily_creative__p202601 USING btree (account, period_start, period_end, day, campaign_id, creative_id);
CREATE UNIQUE INDEX report_daily_geo_device_key ON ONLY adops.report_daily_geo_device USING btree (account, period_start, period_end, day, ((md5(country))::uuid), ((md5(device))::uuid));
CREATE UNIQUE INDEX report_daily_geo_device__p202_account_period_start_period__idx1 ON adops.report_daily_geo_device__p202602 USING btree (account, period_start, period_end, day, ((md5(country))::uuid), ((md5(device))::uuid));
CREATE UNIQUE INDEX report_daily_geo_device__p202_account_period_start_period__idx2 ON adops.report_daily_geo_device__p202603 USING btree (account, period_start, period_end, day, ((md5(country))::uuid), ((md5(device))::uuid));
CREATE UNIQUE INDEX report_daily_geo_device__p202_account_period_start_period_e_idx ON adops.report_daily_geo_device__p202601 USING btree (account, period_start, period_end, day, ((md5(country))::uuid), ((md5(device))::uuid));
CREATE UNIQUE INDEX report_daily_zone_key ON ONLY adops.report_daily_zone USING btree (account, period_start, period_end, day, zone_id);
CREATE UNIQUE INDEX report_daily_zone__p202601_account_period_start_period_end__idx ON adops.report_daily_zone__p202601 USING btree (account, period_start, period_end, day, zone_id);
CREATE INDEX report_daily_zone_zone_id ON ONLY adops.report_daily_zone USING btree (zone_id);
CREATE INDEX report_daily_zone__p202601_zone_id_idx ON adops.report_daily_zone__p202601 USING btree (zone_id);
CREATE UNIQUE INDEX report_daily_zone__p202602_account_period_start_period_end__idx ON adops.report_daily_zone__p202602 USING btree (account, period_start, period_end, day, zone_id);
CREATE INDEX report_daily_zone__p202602_zone_id_idx ON adops.report_daily_zone__p202602 USING btree (zone_id);
CREATE UNIQUE INDEX report_daily_zone__p202603_account_period_start_period_end__idx ON adops.report_daily_zone__p202603 USING btree (account, period_start, period_end, day, zone_id);
CREATE INDEX report_daily_zone__p202603_zone_id_idx ON adops.report_daily_zone__p202603 USING btree (zone_id);
CREATE UNIQUE INDEX report_hourly_key ON ONLY adops.report_hourly USING btree (account, period_start, period_end, day, hour);
CREATE UNIQUE INDEX report_hourly__p202601_account_period_start_period_end_day__idx ON adops.report_hourly__p202601 USING btree (account, period_start, period_end, day, hour);
CREATE UNIQUE INDEX report_hourly__p202602_account_period_start_period_end_day__idx ON adops.report_hourly__p202602 USING btree (account, period_start, period_end, day, hour);
CREATE UNIQUE INDEX report_hourly__p202603_account_period_start_period_end_day__idx ON adops.report_hourly__p202603 USING btree (account, period_start, period_end, day, hour);
CREATE INDEX report_loads_fetch_token ON adops.report_loads USING btree (account, fetch_token);
CREATE INDEX report_loads_load_id ON adops.report_loads USING btree (load_id);
CREATE INDEX report_loads_period ON adops.report_loads USING btree (account, report, period_start, period_end, load_id);
CREATE INDEX report_loads_provisional ON adops.report_loads USING btree (load_id) WHERE provisional;
CREATE INDEX report_loads_recorded ON adops.report_loads USING btree (recorded_at);
CREATE INDEX report_loads_restated ON adops.report_loads USING btree (report, ((- load_id))) WHERE ((status = 'loaded'::text) AND (restatement IS NOT NULL));
CREATE INDEX report_raw_archived ON adops.report_raw USING btree (archived_at);
CREATE INDEX report_raw_parts_written ON adops.report_raw_parts USING btree (written_at);
CREATE INDEX report_raw_spool ON adops.report_raw USING btree (account, spool_id) WHERE (spool_id IS NOT NULL);
CREATE UNIQUE INDEX report_versions_dimensions ON adops.report_versions USING btree (report, dimensions);
CREATE UNIQUE INDEX report_versions_one_building ON adops.report_versions USING btree (report) WHERE (state = 'building'::text);
CREATE UNIQUE INDEX report_versions_one_serving ON adops.report_versions USING btree (report) WHERE (state = 'serving'::text);
ALTER INDEX adops.report_daily_campaign_campaign_id ATTACH PARTITION adops.report_daily_campaign__p202601_campaign_id_idx;
ALTER INDEX adops.report_daily_campaign_campaign_id ATTACH PARTITION adops.report_daily_campaign__p202602_campaign_id_idx;
ALTER INDEX adops.report_daily_campaign_campaign_id ATTACH PARTITION adops.report_daily_campaign__p202603_campaign_id_idx;
ALTER INDEX adops.report_daily_campaign_key ATTACH PARTITION adops.report_daily_campaign__p20260_account_period_start_period__idx1;
ALTER INDEX adops.report_daily_campaign_key ATTACH PARTITION adops.report_daily_campaign__p20260_account_period_start_period__idx2;
ALTER INDEX adops.report_daily_campaign_key ATTACH PARTITION adops.report_daily_campaign__p20260_account_period_start_period_e_idx;
ALTER INDEX adops.report_daily_creative_campaign_id ATTACH PARTITION adops.report_daily_creative__p202601_campaign_id_idx;
ALTER INDEX adops.report_daily_creative_creative_id ATTACH PARTITION adops.report_daily_creative__p202601_creative_id_idx;
ALTER INDEX adops.report_daily_creative_campaign_id ATTACH PARTITION adops.report_daily_creative__p202602_campaign_id_idx;
ALTER INDEX adops.report_daily_creative_creative_id ATTACH PARTITION adops.report_daily_creative__p202602_creative_id_idx;
ALTER INDEX adops.report_daily_creative_campaign_id ATTACH PARTITION adops.report_daily_creative__p202603_campaign_id_idx;
ALTER INDEX adops.report_daily_creative_creative_id ATTACH PARTITION adops.report_daily_creative__p202603_creative_id_idx;
ALTER INDEX adops.report_daily_creative_key ATTACH PARTITION adops.report_daily_creative__p20260_account_period_start_period__idx1;
ALTER INDEX adops.report_daily_creative_key ATTACH PARTITION adops.report_daily_creative__p20260_account_period_start_period__idx2;
ALTER INDEX adops.report_daily_creative_key ATTACH PARTITION adops.report_daily_creative__p20260_account_period_start_period_e_idx;
ALTER INDEX adops.report_daily_geo_device_key ATTACH PARTITION adops.report_daily_geo_device__p202_account_period_start_period__idx1;
ALTER INDEX adops.report_daily_geo_device_key ATTACH PARTITION adops.report_daily_geo_device__p202_account_period_start_period__idx2;
ALTER INDEX adops.report_daily_geo_device_key ATTACH PARTITION adops.report_daily_geo_device__p202_account_period_start_period_e_idx;
ALTER INDEX adops.report_daily_zone_key ATTACH PARTITION adops.report_daily_zone__p202601_account_period_start_period_end__idx;
ALTER INDEX adops.report_daily_zone_zone_id ATTACH PARTITION adops.report_daily_zone__p202601_zone_id_idx;
ALTER INDEX adops.report_daily_zone_key ATTACH PARTITION adops.report_daily_zone__p202602_account_period_start_period_end__idx;
ALTER INDEX adops.report_daily_zone_zone_id ATTACH PARTITION adops.report_daily_zone__p202602_zone_id_idx;
ALTER INDEX adops.report_daily_zone_key ATTACH PARTITION adops.report_daily_zone__p202603_account_period_start_period_end__idx;
ALTER INDEX adops.report_daily_zone_zone_id ATTACH PARTITION adops.report_daily_zone__p202603_zone_id_idx;
ALTER INDEX adops.report_hourly_key ATTACH PARTITION adops.report_hourly__p202601_account_period_start_period_end_day__idx;
ALTER INDEX adops.report_hourly_key ATTACH PARTITION adops.report_hourly__p202602_account_period_start_period_end_day__idx;
ALTER INDEX adops.report_hourly_key ATTACH PARTITION adops.report_hourly__p202603_account_period_start_period_end_day__idx;
ALTER TABLE ONLY adops.campaign_zones
    ADD CONSTRAINT campaign_zones_campaign_id_fkey FOREIGN KEY (account, campaign_id) REFERENCES adops.campaigns(account, campaign_id) ON DELETE CASCADE;
ALTER TABLE ONLY adops.entity_sync_pages
    ADD CONSTRAINT entity_sync_pages_run_id_fkey FOREIGN KEY (run_id) REFERENCES adops.entity_sync_runs(run_id) ON DELETE CASCADE;
ALTER TABLE ONLY adops.report_raw
    ADD CONSTRAINT report_raw_load_id_fkey FOREIGN KEY (account, load_id) REFERENCES adops.report_loads(account, load_id) ON DELETE CASCADE;
ALTER TABLE ONLY adops.report_totals
    ADD CONSTRAINT report_totals_load_id_fkey FOREIGN KEY (account, load_id) REFERENCES adops.report_loads(account, load_id);
