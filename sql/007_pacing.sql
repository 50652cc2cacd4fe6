-- 007_pacing: what the campaign.behind webhook has told. bi_campaign_pacing itself is made by
-- `adops migrate` after the numbered files (src/schema/pacing.ts), as it reads a report table the job
-- definitions choose; this table only keeps the announcements, one per campaign and day at most,
-- claimed by one atomic insert so that of several workers only the first tells.

CREATE TABLE announced_pacing (
  account text NOT NULL,
  campaign_id bigint NOT NULL,
  day date NOT NULL,
  announced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, campaign_id, day)
);
COMMENT ON TABLE announced_pacing IS 'Campaigns the campaign.behind webhook announced as behind, once per campaign and UTC day.';
COMMENT ON COLUMN announced_pacing.day IS 'The UTC day of the announcement: a campaign still behind the next day is announced again.';
