import { describe, expect, it } from 'vitest';
import { mapCreative } from '../../../src/catalogue/rows.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { creative, stringEncoded } from './fixtures.js';
import type { CreativeRow } from '../../../src/warehouse/catalogue/rows.js';

/** Maps a creative that must have a readable id; `problems` collects what it reported. */
function map(input: unknown, listedUnder: number, problems = new ProblemLog()): CreativeRow {
  const row = mapCreative(input, listedUnder, problems);
  if (row === undefined) throw new Error('creative skipped');
  return row;
}

describe('mapCreative', () => {
  it('maps typed columns, data and targeting of a documented video creative', () => {
    const input = creative({ targeting: { devices: ['desktop'] } });
    const row = map(input, 862599431);
    expect(row).toMatchObject({
      creative_id: 210267475,
      campaign_id: 862599431,
      name: 'Hero video',
      ad_type: 'video',
      is_active: true,
      weight: 1,
      delivery_start: null,
      delivery_end: '2025-10-12T08:00:00.000Z',
      thumbnail_color: '#a1b2c3',
      thumbnail_filehash: 'thumb_abcde.jpg',
      data_width: 1920,
      data_height: 1080,
      data_filehash: 'abcde_s8w826w9.mp4',
      data_landing_page: '',
      targeting: { devices: ['desktop'] },
    });
    expect(row.data).toEqual(input.data);
    expect(row.raw).toBe(input);
  });

  it('reads [] targeting, [] thumbnail and missing data as null', () => {
    const row = map(creative({ targeting: [], thumbnail: [], data: undefined }), 862599431);
    expect(row.targeting).toBeNull();
    expect(row.thumbnail_color).toBeNull();
    expect(row.data).toBeNull();
    expect(row.data_width).toBeNull();
  });

  it('takes the campaign from the listing when the creative omits campaign_id', () => {
    expect(map(creative({ campaign_id: undefined }), 42).campaign_id).toBe(42);
  });

  it('stores a creative under the campaign it was listed under, reporting a campaign_id that disagrees', () => {
    const problems = new ProblemLog();
    expect(map(creative(), 1, problems).campaign_id).toBe(1);
    expect(problems.summary().examples).toEqual([
      {
        entity: 'creative',
        id: 210267475,
        field: 'campaign_id',
        expected: '1, the campaign it was listed under',
        value: '862599431 (number)',
      },
    ]);
  });

  it('reads a string-encoded creative like the plain one', () => {
    const problems = new ProblemLog();
    const plain = map(creative(), 862599431);
    const encoded = map(stringEncoded(creative()), 862599431, problems);
    expect(problems.count).toBe(0);
    expect({ ...encoded, raw: null, data: null }).toEqual({ ...plain, raw: null, data: null });
    expect(encoded.data).toMatchObject({ width: '1920', use_iframe: '1' });
  });

  it('reads a wrong-typed data.width as NULL, keeping the rest and reporting creative id and field', () => {
    const problems = new ProblemLog();
    const input = creative({ data: { width: '1920px', height: 1080, filehash: 'f' } });
    const row = map(input, 862599431, problems);
    expect(row).toMatchObject({ data_width: null, data_height: 1080, data_filehash: 'f' });
    expect(problems.summary().examples).toMatchObject([
      { entity: 'creative', id: 210267475, field: 'data.width', value: '"1920px" (string)' },
    ]);
  });

  it('skips a creative whose id cannot be read', () => {
    const problems = new ProblemLog();
    expect(mapCreative(creative({ creative_id: '12ab' }), 862599431, problems)).toBeUndefined();
    expect(problems.summary()).toMatchObject({
      count: 1,
      skipped: 1,
      examples: [{ field: 'creative_id', id: null }],
    });
  });
});
