-- 002_shared_state: what the workers share beside the queue, kept in Postgres so that a deployment
-- on the Postgres queue (ADOPS_QUEUE=postgres) needs no Redis: the API request limit and its 429
-- pause, and the freshness watch's memory of what it told webhooks. The functions are the Postgres
-- twins of the Lua scripts of src/limits/redis.ts: atomic under the row's lock, with the
-- database's clock deciding, so workers on machines with skewed clocks agree.

-- One row per limiter key (src/limits/redis.ts limiterKey: one per account).
CREATE TABLE api_limits (
  key text PRIMARY KEY,
  -- The one-second window being counted (ms since the epoch / window length) and its slots taken.
  window_no bigint NOT NULL DEFAULT 0,
  taken integer NOT NULL DEFAULT 0,
  -- Every process holds its requests to this key until then, after a 429 (the database's clock).
  paused_until timestamptz NOT NULL DEFAULT '-infinity'
);
COMMENT ON TABLE api_limits IS 'The API request limit shared by every worker (adops worker), and its 429 pause.';

-- Takes up to p_want of the window's p_max slots. While a pause runs: (0, -1, ms until it ends,
-- true). Else (slots taken, 0 when none are left; window number; ms until the window ends; false).
-- A pause running longer than p_longest ms (set by a process that obeyed a Retry-After of decades)
-- is cut to it.
CREATE FUNCTION api_limit_take(p_key text, p_max integer, p_window integer, p_want integer, p_longest bigint,
  OUT taken integer, OUT window_no bigint, OUT left_ms bigint, OUT paused boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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

-- Extends the pause of p_key to p_ms from now unless one already runs longer (a shorter 429 never
-- shortens a pause), tells every listening process on the channel adops_api_pause (payload: JSON
-- {schema, key, ms}), and returns the ms the pause in force has left.
CREATE FUNCTION api_limit_pause(p_key text, p_ms bigint) RETURNS bigint
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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

-- The freshness watch's last seen state of each report (the webhook worker's evaluation): only
-- transitions are told, and the swap is one statement, so of several workers evaluating at once
-- only the first to see a transition tells it.
CREATE TABLE freshness_states (
  account text NOT NULL,
  report text NOT NULL,
  state text NOT NULL CHECK (state IN ('late', 'fresh')),
  -- The state this one replaced; null when the report was first seen.
  previous text,
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, report)
);
COMMENT ON TABLE freshness_states IS 'Last freshness state of each report seen by the webhook worker (report.late, report.fresh).';

-- Disagreements between reports already told as report.disagrees, keyed by their sums too, so a
-- changed gap after a re-pull is news again. Forgotten after 400 days (the status window at most).
CREATE TABLE announced_disagreements (
  account text NOT NULL,
  period_start date NOT NULL,
  period_end date NOT NULL,
  report text NOT NULL,
  other_report text NOT NULL,
  sums text NOT NULL,
  announced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, period_start, period_end, report, other_report, sums)
);
COMMENT ON TABLE announced_disagreements IS 'Report disagreements already announced by the report.disagrees webhook.';
