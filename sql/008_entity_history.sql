-- History of the catalogue (SCD type 2): each change of a campaign's or creative's name, status
-- (is_active, is_archived for campaigns, deleted) or delivery window is kept as a new version with
-- its validity interval [valid_from, valid_to), so a dashboard can show the name an entity had
-- when an impression happened. Written by each sync in its catalogue transaction
-- (src/warehouse/entities/history.ts). valid_to is NULL for the current version. An entity's first
-- version starts at its `created` time (or the sync's, if later or unknown): what the first sync
-- saw is the best knowledge of the time before it.
-- Names are unqualified: the migration runner sets search_path to the configured schema.

CREATE TABLE campaigns_history (
  campaign_id    bigint NOT NULL,
  name           text,
  is_active      boolean,
  is_archived    boolean,
  delivery_start timestamptz,
  delivery_end   timestamptz,
  deleted        boolean NOT NULL,
  valid_from     timestamptz NOT NULL,
  valid_to       timestamptz,
  PRIMARY KEY (campaign_id, valid_from),
  CHECK (valid_to IS NULL OR valid_to > valid_from)
);

CREATE UNIQUE INDEX campaigns_history_current ON campaigns_history (campaign_id) WHERE valid_to IS NULL;

CREATE TABLE creatives_history (
  creative_id    bigint NOT NULL,
  campaign_id    bigint NOT NULL,
  name           text,
  is_active      boolean,
  delivery_start timestamptz,
  delivery_end   timestamptz,
  deleted        boolean NOT NULL,
  valid_from     timestamptz NOT NULL,
  valid_to       timestamptz,
  PRIMARY KEY (creative_id, valid_from),
  CHECK (valid_to IS NULL OR valid_to > valid_from)
);

CREATE UNIQUE INDEX creatives_history_current ON creatives_history (creative_id) WHERE valid_to IS NULL;

COMMENT ON TABLE campaigns_history IS 'One row per version of a campaign''s name, status and delivery; current version: valid_to IS NULL.';
COMMENT ON TABLE creatives_history IS 'One row per version of a creative''s name, status and delivery; current version: valid_to IS NULL.';
COMMENT ON COLUMN campaigns_history.valid_to IS 'Exclusive end: the version holds for valid_from <= t < valid_to.';
COMMENT ON COLUMN creatives_history.valid_to IS 'Exclusive end: the version holds for valid_from <= t < valid_to.';

-- The catalogue as it is now is every entity's first version.
INSERT INTO campaigns_history
SELECT campaign_id, name, is_active, is_archived, delivery_start, delivery_end, deleted_at IS NOT NULL,
       least(coalesce(created, synced_at), synced_at), NULL
  FROM campaigns;

INSERT INTO creatives_history
SELECT creative_id, campaign_id, name, is_active, delivery_start, delivery_end, deleted_at IS NOT NULL,
       least(coalesce(created, synced_at), synced_at), NULL
  FROM creatives;
