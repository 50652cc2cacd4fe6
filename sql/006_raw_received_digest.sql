-- 006_raw_received_digest: report_raw stores a body with any echo of the API key redacted, so the
-- stored body may differ from the one received. body_sha256 stays the digest of the stored body
-- (replay checks it); received_sha256 is the digest of the body as the API sent it, which is what
-- tells a repeated broken answer from a new one.
-- Names are unqualified: the migration runner sets search_path to the configured schema.

ALTER TABLE report_raw ADD COLUMN received_sha256 text;
-- Bodies archived before this migration were stored as received.
UPDATE report_raw SET received_sha256 = body_sha256;
ALTER TABLE report_raw ALTER COLUMN received_sha256 SET NOT NULL;

COMMENT ON COLUMN report_raw.body_sha256 IS 'SHA-256 of the stored body (the API key redacted), checked when the body is read back.';
COMMENT ON COLUMN report_raw.received_sha256 IS 'SHA-256 of the body as received, before the API key was redacted from it.';
