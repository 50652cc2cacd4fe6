import { EntityFieldError } from './errors.js';
import { FieldReader, INTEGER, readId, type JsonObject } from './fields.js';

/** One row of `creatives`, keyed by column name (see CREATIVE_COLUMNS); times are ISO instants. */
export interface CreativeRow {
  readonly creative_id: number;
  readonly campaign_id: number;
  readonly name: string | null;
  readonly ad_type: string | null;
  readonly is_active: boolean | null;
  readonly account_id_created: number | null;
  readonly account_id_modified: number | null;
  readonly created: string | null;
  readonly modified: string | null;
  readonly weight: number | null;
  readonly delivery_start: string | null;
  readonly delivery_end: string | null;
  readonly thumbnail_color: string | null;
  readonly thumbnail_filehash: string | null;
  readonly data_width: number | null;
  readonly data_height: number | null;
  readonly data_filehash: string | null;
  readonly data_landing_page: string | null;
  readonly data: JsonObject | null;
  readonly targeting: JsonObject | unknown[] | null;
  readonly raw: JsonObject;
}

const EMPTY: JsonObject = {};

/**
 * Maps a creative listed under campaign `listedUnder` to its typed row. The creative's own
 * campaign_id wins when present, but must agree with the listing: a mismatch means the data is
 * not what the spec promises, and is refused rather than stored under the wrong campaign.
 */
export function mapCreative(creative: unknown, listedUnder: number): CreativeRow {
  const id = readId('creative', creative, 'creative_id');
  const c = creative as JsonObject;
  const r = new FieldReader('creative', id);
  const campaignId = r.int(c, 'campaign_id') ?? listedUnder;
  if (campaignId !== listedUnder)
    throw new EntityFieldError(
      'creative',
      id,
      'campaign_id',
      `${listedUnder}, the campaign it was listed under`,
      campaignId,
    );
  const delivery = r.objectOrUnset(c, 'delivery') ?? EMPTY;
  const thumbnail = r.objectOrUnset(c, 'thumbnail') ?? EMPTY;
  const data = r.objectOrUnset(c, 'data');
  const d = data ?? EMPTY;
  return {
    creative_id: id,
    campaign_id: campaignId,
    name: r.str(c, 'name'),
    ad_type: r.str(c, 'ad_type'),
    is_active: r.bool(c, 'is_active'),
    account_id_created: r.int(c, 'account_id_created'),
    account_id_modified: r.int(c, 'account_id_modified'),
    created: r.time(c, 'created'),
    modified: r.time(c, 'modified'),
    weight: r.int(c, 'weight', 'weight', INTEGER),
    delivery_start: r.time(delivery, 'start', 'delivery.start'),
    delivery_end: r.time(delivery, 'end', 'delivery.end'),
    thumbnail_color: r.str(thumbnail, 'average_color', 'thumbnail.average_color'),
    thumbnail_filehash: r.str(thumbnail, 'filehash', 'thumbnail.filehash'),
    data_width: r.int(d, 'width', 'data.width', INTEGER),
    data_height: r.int(d, 'height', 'data.height', INTEGER),
    data_filehash: r.str(d, 'filehash', 'data.filehash'),
    data_landing_page: r.str(d, 'landing_page', 'data.landing_page'),
    data,
    targeting: r.jsonOrUnset(c, 'targeting'),
    raw: c,
  };
}
