-- 011_retention_marks: a report may declare retention_months. Its monthly partitions whose every day
-- is older are dropped whole (src/warehouse/retention.ts), and the periods they held are marked
-- here rather than deleted: the audit trail stays, `adops status` says "dropped by retention",
-- and heal does not count them as loaded.
ALTER TABLE report_loads ADD COLUMN retention_dropped_at timestamptz;
ALTER TABLE report_totals ADD COLUMN retention_dropped_at timestamptz;
