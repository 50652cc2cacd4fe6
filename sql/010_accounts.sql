-- 010_accounts: one warehouse for several ad server accounts (ADOPS_ACCOUNTS_FILE). Every table
-- that holds an account's data gains `account`, named like a report; the rows already there
-- belong to the single account of earlier releases, `default`. The account is part of every
-- primary and unique key, and foreign keys pair rows of one account only, so the schema maps
-- onto Citus with `account` as the distribution column (docs/warehouse.md). report_<name>
-- tables get their column from `adops migrate` (src/warehouse/report-tables.ts), which creates
-- them from the job definitions after these files.
-- Names are unqualified: the migration runner sets search_path to the configured schema.

-- ADD COLUMN with a constant default rewrites nothing: existing rows read the default.
ALTER TABLE report_loads ADD COLUMN account text NOT NULL DEFAULT 'default'
  CONSTRAINT report_loads_account_check CHECK (account ~ '^[a-z][a-z0-9_]{0,40}$');
ALTER TABLE report_totals ADD COLUMN account text NOT NULL DEFAULT 'default';
ALTER TABLE report_raw ADD COLUMN account text NOT NULL DEFAULT 'default';

ALTER TABLE report_totals DROP CONSTRAINT report_totals_load_id_fkey;
ALTER TABLE report_raw DROP CONSTRAINT report_raw_load_id_fkey;
ALTER TABLE report_loads DROP CONSTRAINT report_loads_pkey;
ALTER TABLE report_loads ADD CONSTRAINT report_loads_pkey PRIMARY KEY (account, load_id);
ALTER TABLE report_totals DROP CONSTRAINT report_totals_pkey;
ALTER TABLE report_totals ADD CONSTRAINT report_totals_pkey PRIMARY KEY (account, report, period_start, period_end);
ALTER TABLE report_totals ADD CONSTRAINT report_totals_load_id_fkey
  FOREIGN KEY (account, load_id) REFERENCES report_loads (account, load_id);
ALTER TABLE report_raw DROP CONSTRAINT report_raw_pkey;
ALTER TABLE report_raw ADD CONSTRAINT report_raw_pkey PRIMARY KEY (account, load_id);
ALTER TABLE report_raw ADD CONSTRAINT report_raw_load_id_fkey
  FOREIGN KEY (account, load_id) REFERENCES report_loads (account, load_id) ON DELETE CASCADE;
-- A load is still found by its id alone (adops replay, the dashboard), and load ids stay unique
-- across accounts: they come from one identity.
CREATE INDEX report_loads_load_id ON report_loads (load_id);
DROP INDEX report_loads_period;
CREATE INDEX report_loads_period ON report_loads (account, report, period_start, period_end, load_id);

COMMENT ON COLUMN report_loads.account IS 'The ad server account of the pull (ADOPS_ACCOUNTS_FILE); default for a single-account deployment.';

-- The catalogue: ids are the ad server's, unique within one account only.
ALTER TABLE campaigns ADD COLUMN account text NOT NULL DEFAULT 'default'
  CONSTRAINT campaigns_account_check CHECK (account ~ '^[a-z][a-z0-9_]{0,40}$');
ALTER TABLE creatives ADD COLUMN account text NOT NULL DEFAULT 'default';
ALTER TABLE campaign_zones ADD COLUMN account text NOT NULL DEFAULT 'default';
ALTER TABLE campaigns_history ADD COLUMN account text NOT NULL DEFAULT 'default';
ALTER TABLE creatives_history ADD COLUMN account text NOT NULL DEFAULT 'default';

ALTER TABLE campaign_zones DROP CONSTRAINT campaign_zones_campaign_id_fkey;
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pkey;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pkey PRIMARY KEY (account, campaign_id);
ALTER TABLE campaign_zones DROP CONSTRAINT campaign_zones_pkey;
ALTER TABLE campaign_zones ADD CONSTRAINT campaign_zones_pkey PRIMARY KEY (account, campaign_id, zone_id);
ALTER TABLE campaign_zones ADD CONSTRAINT campaign_zones_campaign_id_fkey
  FOREIGN KEY (account, campaign_id) REFERENCES campaigns (account, campaign_id) ON DELETE CASCADE;
ALTER TABLE creatives DROP CONSTRAINT creatives_pkey;
ALTER TABLE creatives ADD CONSTRAINT creatives_pkey PRIMARY KEY (account, creative_id);
DROP INDEX creatives_campaign_idx;
CREATE INDEX creatives_campaign_idx ON creatives (account, campaign_id);
DROP INDEX campaign_zones_zone_idx;
CREATE INDEX campaign_zones_zone_idx ON campaign_zones (account, zone_id);

ALTER TABLE campaigns_history DROP CONSTRAINT campaigns_history_pkey;
ALTER TABLE campaigns_history ADD CONSTRAINT campaigns_history_pkey PRIMARY KEY (account, campaign_id, valid_from);
DROP INDEX campaigns_history_current;
CREATE UNIQUE INDEX campaigns_history_current ON campaigns_history (account, campaign_id) WHERE valid_to IS NULL;
ALTER TABLE creatives_history DROP CONSTRAINT creatives_history_pkey;
ALTER TABLE creatives_history ADD CONSTRAINT creatives_history_pkey PRIMARY KEY (account, creative_id, valid_from);
DROP INDEX creatives_history_current;
CREATE UNIQUE INDEX creatives_history_current ON creatives_history (account, creative_id) WHERE valid_to IS NULL;

-- A catalogue sync is of one account; its run id (the queue's job id) already names it.
ALTER TABLE entity_sync_runs ADD COLUMN account text NOT NULL DEFAULT 'default';
CREATE INDEX entity_sync_runs_account_idx ON entity_sync_runs (account, started_at);

COMMENT ON COLUMN campaigns.account IS 'The ad server account the campaign belongs to; campaign ids are unique within an account.';
