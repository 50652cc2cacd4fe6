-- Catalogue sync runs and their checkpoint (src/warehouse/entities/runs.ts, staging.ts).
-- A sync stages every page it reads; a sync that dies with its worker resumes from the staged
-- pages on its next try instead of page one. The catalogue itself is still written in one
-- transaction from everything read, which also marks the run written and drops its pages.
-- Names are unqualified: the migration runner sets search_path to the configured schema.

CREATE TABLE entity_sync_runs (
  run_id          text PRIMARY KEY,
  status          text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'written', 'failed')),
  started_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  tries           integer NOT NULL DEFAULT 1,
  requests        bigint NOT NULL DEFAULT 0,
  campaigns_total integer,
  campaigns_done  integer NOT NULL DEFAULT 0,
  result          jsonb,
  problem_count   integer NOT NULL DEFAULT 0,
  problems        jsonb,
  error           text
);

CREATE INDEX entity_sync_runs_started_idx ON entity_sync_runs (started_at);

COMMENT ON TABLE entity_sync_runs IS 'One row per catalogue sync (adops sync): progress, result, unreadable fields.';
COMMENT ON COLUMN entity_sync_runs.run_id IS 'The BullMQ job id of a queued sync (its retries and stall recoveries share it), or d-... for --direct.';
COMMENT ON COLUMN entity_sync_runs.tries IS 'Times the run was started: more than 1 when it resumed from its checkpoint.';
COMMENT ON COLUMN entity_sync_runs.problems IS 'Fields that could not be read: {count, skipped, byField, examples (the first 100)}.';

-- UNLOGGED: a checkpoint is worth no WAL. After a Postgres crash the table is empty and a resumed
-- run simply reads everything again.
CREATE UNLOGGED TABLE entity_sync_pages (
  run_id      text NOT NULL REFERENCES entity_sync_runs (run_id) ON DELETE CASCADE,
  listing     bigint NOT NULL,
  page_offset integer NOT NULL,
  items       jsonb NOT NULL,
  size        integer NOT NULL,
  last        boolean NOT NULL,
  gone        boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, listing, page_offset)
);

COMMENT ON TABLE entity_sync_pages IS 'Pages a running catalogue sync has read (its checkpoint); dropped when the run is written.';
COMMENT ON COLUMN entity_sync_pages.listing IS '0: GET /campaigns; otherwise the campaign id of GET /campaigns/{id}/creatives.';
COMMENT ON COLUMN entity_sync_pages.items IS 'The page''s items as returned, minus those earlier pages of the listing already had.';
COMMENT ON COLUMN entity_sync_pages.gone IS 'The creative listing answered 404: the campaign was deleted during the sync.';
