-- 004_failed_step: the step at which a failed pull failed, beside its error, as dlt's
-- PipelineStepFailed names its step: fetch (the API request), parse (reading rows and totals out of
-- the body), load (the transaction that replaces the period's rows) or archive (keeping the raw
-- body). NULL for loaded and superseded attempts, and for failed ones recorded before this column.

ALTER TABLE report_loads
  ADD COLUMN failed_step text
    CONSTRAINT report_loads_failed_step_check
      CHECK (failed_step IS NULL OR (status = 'failed' AND failed_step IN ('fetch', 'parse', 'load', 'archive')));

COMMENT ON COLUMN report_loads.failed_step IS 'The step a failed pull failed at: fetch, parse, load or archive (its message is in error); NULL for loaded and superseded attempts, and for failures recorded before 004.';
