import { describe, expect, it } from 'vitest';
import { mapCreative } from '../../../src/warehouse/entities/creative-row.js';
import { EntityFieldError } from '../../../src/warehouse/entities/errors.js';
import { creative } from './fixtures.js';

describe('mapCreative', () => {
  it('maps typed columns, data and targeting of a documented video creative', () => {
    const input = creative({ targeting: { devices: ['desktop'] } });
    const row = mapCreative(input, 862599431);
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
    const row = mapCreative(creative({ targeting: [], thumbnail: [], data: undefined }), 862599431);
    expect(row.targeting).toBeNull();
    expect(row.thumbnail_color).toBeNull();
    expect(row.data).toBeNull();
    expect(row.data_width).toBeNull();
  });

  it('takes the campaign from the listing when the creative omits campaign_id', () => {
    expect(mapCreative(creative({ campaign_id: undefined }), 42).campaign_id).toBe(42);
  });

  it('refuses a creative whose campaign_id disagrees with the campaign it was listed under', () => {
    expect(() => mapCreative(creative(), 1)).toThrow(/creative 210267475: field campaign_id/);
  });

  it('fails on a wrong-typed data.width naming creative id and field', () => {
    const input = creative({ data: { width: '1920', height: 1080, filehash: 'f' } });
    expect(() => mapCreative(input, 862599431)).toThrow(EntityFieldError);
    expect(() => mapCreative(input, 862599431)).toThrow(
      /creative 210267475: field data\.width is "1920" \(string\)/,
    );
  });
});
