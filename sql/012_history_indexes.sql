-- 012_history_indexes: the metrics read each report's latest re-pull; that read stays one index
-- step however long report_loads grows.
-- Names are unqualified: the migration runner sets search_path to the configured schema.
--
-- Status, heal and the scheduler tick need no new index: their window queries bound period_start
-- from below as well as above (src/warehouse/loads-query.ts, overlapsWindow), so report_loads_period
-- and report_totals_pkey are read over the window only.
--
-- The metric is per report over every account, so the index leads with the report, not the account.

-- lastRestatements orders by -load_id, an order only this index gives, so the planner cannot pick
-- a backward scan of the primary key instead (which, for a report never re-pulled, reads the whole
-- table). The partial predicate keeps the index to re-pulls.
CREATE INDEX report_loads_restated ON report_loads (report, (-load_id))
  WHERE status = 'loaded' AND restatement IS NOT NULL;
