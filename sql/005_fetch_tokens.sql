-- 005_fetch_tokens: stale-load fencing by a token Postgres issues when a fetch starts, instead of
-- the fetch time read from a worker's clock (a worker whose clock ran ahead made every later,
-- correct re-pull of its periods "superseded").
-- Names are unqualified: the migration runner sets search_path to the configured schema.

-- One token per fetch, taken before its request is sent: a response whose token is lower than
-- the loaded one's was fetched earlier and must not overwrite it.
CREATE SEQUENCE fetch_tokens AS bigint;

ALTER TABLE report_loads ADD COLUMN fetch_token bigint;

-- Loads recorded before this migration were fenced by their fetch times: keep that order.
WITH ordered AS (
  SELECT load_id, row_number() OVER (ORDER BY fetched_at NULLS FIRST, load_id) AS token FROM report_loads
)
UPDATE report_loads l SET fetch_token = o.token FROM ordered o WHERE o.load_id = l.load_id;
SELECT setval('fetch_tokens', (SELECT count(*) FROM report_loads) + 1, false);

COMMENT ON COLUMN report_loads.fetch_token IS 'nextval(fetch_tokens) taken when the fetch started (a replay keeps its original''s): the fencing order of loads. fetched_at is information only.';
