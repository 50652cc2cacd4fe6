-- 008_raw_body: a body read whole (up to 8 MB) is archived as it came (the API key redacted) in
-- report_raw.body, and Postgres compresses it (lz4 where the server was built with it, else its default):
-- the worker no longer gzips it, which was a tenth of the CPU of loading a request of several days. A
-- bigger whole body is still gzipped into body_gzip, as every body archived before was; a streamed body
-- keeps its gzip parts in report_raw_parts. Exactly one of the three holds each body.

ALTER TABLE report_raw ADD COLUMN body bytea;

DO $$
BEGIN
  IF 'lz4' = ANY ((SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression')::text[]) THEN
    ALTER TABLE report_raw ALTER COLUMN body SET COMPRESSION lz4;
  END IF;
END
$$;

ALTER TABLE report_raw DROP CONSTRAINT report_raw_body_or_spool;
ALTER TABLE report_raw ADD CONSTRAINT report_raw_one_body CHECK (num_nonnulls(body, body_gzip, spool_id) = 1);

COMMENT ON COLUMN report_raw.body IS 'The body as received, the API key redacted (compressed by Postgres); NULL when body_gzip or spool_id holds it.';
COMMENT ON COLUMN report_raw.body_gzip IS 'A body archived gzip-compressed: any whole body before 008_raw_body, a whole body over 8 MB since.';
COMMENT ON COLUMN report_raw.spool_id IS 'The parts of a streamed body in report_raw_parts; NULL when body or body_gzip holds the body.';
