-- 009_report_versions: a report's table has versions. Version 1 is report_<name> itself; a change
-- of the definition's dimensions makes a new version report_<name>__v<N>, loaded beside the old
-- one until it covers every period the old one had, when the stable name report_<name> (then a
-- view) and the report's bi_ views switch to it in one transaction.
CREATE TABLE report_versions (
  report text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  dimensions text[] NOT NULL,
  table_name text NOT NULL UNIQUE,
  -- serving: what report_<name> shows; building: loaded, not yet shown; retired: replaced.
  state text NOT NULL CHECK (state IN ('serving', 'building', 'retired')),
  -- Switch the stable views as soon as the version covers the serving one's periods.
  auto_swap boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  swapped_at timestamptz,
  PRIMARY KEY (report, version)
);
CREATE UNIQUE INDEX report_versions_dimensions ON report_versions (report, dimensions);
-- At most one serving and one building version per report.
CREATE UNIQUE INDEX report_versions_one_serving ON report_versions (report) WHERE state = 'serving';
CREATE UNIQUE INDEX report_versions_one_building ON report_versions (report) WHERE state = 'building';
