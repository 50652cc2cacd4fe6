-- 006_provisional: loads of a period not yet ended (`today:` in a job file, adops backfill --today).
-- Such a load is provisional: the next one replaces it, and the period is final only once a pull after
-- its end loads it. Status, heal, freshness and reports-must-agree never count a provisional period as
-- loaded, missing or wrong; every bi_ view says per row whether it is (migrate makes them again).

ALTER TABLE report_loads ADD COLUMN provisional boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN report_loads.provisional IS 'True for a pull of a period not yet ended when its fetch started (today, in the report''s time zone): its rows are replaced by the next pull, and the period is final once a pull after its end loads it. Its restatement, and that of the load after it, stays NULL.';

-- The bi_ views ask of each row whether its load is provisional: the few such loads, found by this index.
CREATE INDEX report_loads_provisional ON report_loads (load_id) WHERE provisional;
