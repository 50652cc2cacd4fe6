-- Entity catalogue: campaigns, creatives and campaign_zones, written by `adops sync`
-- (src/warehouse/entities/write.ts) in one transaction per sync.
-- Names are unqualified: the migration runner sets search_path to the configured schema.
--
-- Conventions (design.md, "Tables"):
--   * UNIX seconds from the API become timestamptz; 0 (start immediately / no end) becomes NULL.
--   * pricing, pacing and targeting come as `[]` when unset: their typed columns are then NULL.
--   * raw holds the whole object as returned, so fields the API adds later are never lost.
--   * synced_at is the time of the last sync that saw the entity; deleted_at is set, never a
--     DELETE, when a sync no longer sees it, and cleared when it comes back.

CREATE TABLE campaigns (
  campaign_id            bigint PRIMARY KEY,
  name                   text,
  ad_format              text,
  advertiser_id          bigint,
  conversion_tracker_id  bigint,
  folder_id              bigint,
  account_id_created     bigint,
  account_id_modified    bigint,
  created                timestamptz,
  modified               timestamptz,
  is_active              boolean,
  is_archived            boolean,
  notes                  text,
  tier                   smallint,
  weight                 smallint,
  delivery_start         timestamptz,
  delivery_end           timestamptz,
  event_ad_requests            bigint,
  event_clicks                 bigint,
  event_filled_impressions     bigint,
  event_impressions            bigint,
  event_measurable_impressions bigint,
  event_viewable_impressions   bigint,
  pricing_model          text,
  pricing_value          numeric,
  pacing_event           text,
  pacing_period          text,
  pacing_speed           text,
  pacing_value           bigint,
  targeting              jsonb,
  raw                    jsonb NOT NULL,
  synced_at              timestamptz NOT NULL,
  deleted_at             timestamptz
);

COMMENT ON TABLE campaigns IS 'Campaign catalogue from GET /campaigns; soft-deleted via deleted_at.';
COMMENT ON COLUMN campaigns.pacing_speed IS 'spread or asap; the spec''s spelling "spead" is stored as spread.';
COMMENT ON COLUMN campaigns.targeting IS 'NULL when the API returns [] (unset).';
COMMENT ON COLUMN campaigns.raw IS 'The whole campaign object as returned by the API.';

CREATE TABLE campaign_zones (
  campaign_id bigint NOT NULL REFERENCES campaigns (campaign_id) ON DELETE CASCADE,
  zone_id     bigint NOT NULL,
  PRIMARY KEY (campaign_id, zone_id)
);

CREATE INDEX campaign_zones_zone_idx ON campaign_zones (zone_id);

COMMENT ON TABLE campaign_zones IS 'Campaign x zone, from campaigns.zone_ids as last seen.';

CREATE TABLE creatives (
  creative_id          bigint PRIMARY KEY,
  campaign_id          bigint NOT NULL,
  name                 text,
  ad_type              text,
  is_active            boolean,
  account_id_created   bigint,
  account_id_modified  bigint,
  created              timestamptz,
  modified             timestamptz,
  weight               integer,
  delivery_start       timestamptz,
  delivery_end         timestamptz,
  thumbnail_color      text,
  thumbnail_filehash   text,
  data_width           integer,
  data_height          integer,
  data_filehash        text,
  data_landing_page    text,
  data                 jsonb,
  targeting            jsonb,
  raw                  jsonb NOT NULL,
  synced_at            timestamptz NOT NULL,
  deleted_at           timestamptz
);

CREATE INDEX creatives_campaign_idx ON creatives (campaign_id);

COMMENT ON TABLE creatives IS 'Creative catalogue from GET /campaigns/{id}/creatives; soft-deleted via deleted_at.';
COMMENT ON COLUMN creatives.targeting IS 'NULL when the API returns [] (unset).';
COMMENT ON COLUMN creatives.raw IS 'The whole creative object as returned by the API.';
