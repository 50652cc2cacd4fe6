-- 013_raw_parts: a big body is loaded while it streams in, so it is archived as it streams in too:
-- gzip-compressed, in parts, written outside the load's transaction so that a load that fails or
-- rolls back still keeps the body for replay. report_raw then names the spool of parts instead of
-- holding the body itself. Parts whose report_raw row never came (a worker killed mid-body) are
-- removed with the rest of the archive by its retention.
-- Names are unqualified: the migration runner sets search_path to the configured schema.

CREATE SEQUENCE report_raw_spool_seq;

CREATE TABLE report_raw_parts (
  account text NOT NULL DEFAULT 'default',
  spool_id bigint NOT NULL,
  part integer NOT NULL,
  gzip bytea NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  -- The account first, as in every key (migration 010): the schema stays Citus-compatible.
  PRIMARY KEY (account, spool_id, part)
);

CREATE INDEX report_raw_parts_written ON report_raw_parts (written_at);

ALTER TABLE report_raw ALTER COLUMN body_gzip DROP NOT NULL;
ALTER TABLE report_raw ADD COLUMN spool_id bigint;
ALTER TABLE report_raw
  ADD CONSTRAINT report_raw_body_or_spool CHECK ((body_gzip IS NULL) <> (spool_id IS NULL));
CREATE INDEX report_raw_spool ON report_raw (account, spool_id) WHERE spool_id IS NOT NULL;

COMMENT ON TABLE report_raw_parts IS 'Streamed bodies, gzip-compressed, in parts (concatenated in part order they are one gzip stream).';
COMMENT ON COLUMN report_raw.spool_id IS 'The parts of a streamed body in report_raw_parts; NULL when body_gzip holds the body.';
