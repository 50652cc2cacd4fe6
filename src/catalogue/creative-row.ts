import { fieldProblem, type ProblemSink } from './field-problem.js';
import { FieldReader, INTEGER, readId, storableEntity } from './fields.js';
import type { CreativeRow, JsonObject } from '../warehouse/catalogue/rows.js';

const EMPTY: JsonObject = {};

/**
 * Maps a creative listed under campaign `listedUnder` to its typed row. It is stored under that
 * campaign: the listing is where the API said it belongs. A campaign_id of its own that disagrees
 * is reported as a problem (the data is not what the spec promises; `raw` keeps it). Fields that
 * cannot be read are NULL and reported; an unreadable creative id returns undefined (reported).
 * Text that Postgres cannot hold is stored repaired, and reported (storableEntity).
 */
export function mapCreative(
  creative: unknown,
  listedUnder: number,
  problems: ProblemSink,
): CreativeRow | undefined {
  const id = readId('creative', creative, 'creative_id', problems);
  if (id === undefined) return undefined;
  const c = storableEntity('creative', id, creative as JsonObject, problems);
  const r = new FieldReader('creative', id, problems);
  const own = r.int(c, 'campaign_id');
  if (own !== null && own !== listedUnder)
    problems.add(
      fieldProblem(
        'creative',
        id,
        'campaign_id',
        `${listedUnder}, the campaign it was listed under`,
        c.campaign_id,
      ),
    );
  const delivery = r.objectOrUnset(c, 'delivery') ?? EMPTY;
  const thumbnail = r.objectOrUnset(c, 'thumbnail') ?? EMPTY;
  const data = r.objectOrUnset(c, 'data');
  const d = data ?? EMPTY;
  return {
    creative_id: id,
    campaign_id: listedUnder,
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
