-- 005_days_per_request: one report request may cover several consecutive periods (days_per_request,
-- ADOPS_DAYS_PER_REQUEST). Each period is still loaded on its own, with its own report_loads row and
-- report_totals row; the periods of one request share its fetch token (taken before the request was
-- sent), which is how `adops loads` groups them and how a replay finds the body, archived once under the
-- first period's load.

-- The API's totals cover the whole request: a period of a request of several gets the sums of its own
-- rows instead (the request's rows were reconciled against the API's totals). Rows of 1.0 were all 'api'.
ALTER TABLE report_totals
  ADD COLUMN totals_source text NOT NULL DEFAULT 'api'
    CONSTRAINT report_totals_totals_source_check CHECK (totals_source IN ('api', 'rows'));

COMMENT ON COLUMN report_totals.totals_source IS 'Where the totals come from: api (the API''s totals of a request for this period alone) or rows (the sums of the period''s rows, its request having covered several periods: the API''s totals, covering them all, were reconciled against all their rows).';

-- The loads of one request (its fetch token), for adops loads and for a replay finding the archived body.
CREATE INDEX report_loads_fetch_token ON report_loads (account, fetch_token);
