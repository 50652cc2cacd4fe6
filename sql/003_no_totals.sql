-- 003_no_totals: a report whose body has no totals (none, null, [] or {}) or only some of them
-- still loads its rows; the load is then unreconciled, and says why.
-- Names are unqualified: the migration runner sets search_path to the configured schema.

-- A counter the API did not give is NULL. The row itself stays: fencing (which load owns the
-- period) and restatement look the period's load up through it.
ALTER TABLE report_totals
  ALTER COLUMN ad_requests DROP NOT NULL,
  ALTER COLUMN filled_impressions DROP NOT NULL,
  ALTER COLUMN impressions DROP NOT NULL,
  ALTER COLUMN measurable_impressions DROP NOT NULL,
  ALTER COLUMN viewable_impressions DROP NOT NULL;

-- Why a load is unreconciled: 'mismatch' (the rows do not add up: see mismatch), 'no totals' (the
-- body gave none: nothing was checked), 'partial totals' (some counters missing: only the given
-- ones were checked, differences in mismatch). NULL when reconciled or when nothing was parsed.
ALTER TABLE report_loads
  ADD COLUMN unreconciled_reason text
    CHECK (unreconciled_reason IN ('mismatch', 'no totals', 'partial totals'));

-- Loads recorded before this migration could only be unreconciled by a mismatch.
UPDATE report_loads SET unreconciled_reason = 'mismatch' WHERE reconciled = false;
