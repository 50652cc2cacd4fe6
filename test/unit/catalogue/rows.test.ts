// Campaigns and creatives mapped to catalogue rows, and the catalogue built from them (src/catalogue/rows.ts).
import { describe, expect, it } from 'vitest';
import { buildCatalogue, mapCampaign, mapCreative, normalizeSpeed } from '../../../src/catalogue/rows.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { bareCampaign, creative, fullCampaign, stringEncoded } from './fixtures.js';
import type { CreativeRow, MappedCampaign } from '../../../src/catalogue/stored-rows.js';

/** Maps a campaign that must have a readable id, with the problems it reported. */
function map(input: unknown): MappedCampaign & { problems: ProblemLog } {
  const problems = new ProblemLog();
  const mapped = mapCampaign(input, problems);
  if (mapped === undefined) throw new Error('campaign skipped');
  return { ...mapped, problems };
}

describe('mapCampaign', () => {
  it('maps every field of a campaign with pricing, pacing and targeting set', () => {
    const { row, zoneIds } = map(fullCampaign());
    expect(row).toMatchObject({
      campaign_id: 862599431,
      name: 'Spring sale',
      ad_format: 'display',
      advertiser_id: 501,
      conversion_tracker_id: 77,
      folder_id: 12,
      account_id_created: 9001,
      account_id_modified: 9002,
      created: '2025-09-12T08:00:27.000Z',
      modified: '2025-09-13T08:00:27.000Z',
      is_active: true,
      is_archived: false,
      tier: 3,
      weight: 40,
      delivery_start: '2025-09-12T08:00:00.000Z',
      delivery_end: '2025-10-12T08:00:00.000Z',
      event_ad_requests: 1000,
      event_clicks: 7,
      event_filled_impressions: 900,
      event_impressions: 880,
      event_measurable_impressions: 800,
      event_viewable_impressions: 600,
      pricing_model: 'CPM',
      pricing_value: 2.75,
      pacing_event: 'impressions',
      pacing_period: 'day',
      pacing_speed: 'spread',
      pacing_value: 10000,
      targeting: { devices: ['mobile'] },
    });
    expect(zoneIds).toEqual([11, 12]);
  });

  it('reads [] pricing, pacing and targeting and 0 delivery times as null', () => {
    const { row, zoneIds } = map(bareCampaign());
    expect(row).toMatchObject({
      pricing_model: null,
      pricing_value: null,
      pacing_event: null,
      pacing_period: null,
      pacing_speed: null,
      pacing_value: null,
      targeting: null,
      delivery_start: null,
      delivery_end: null,
    });
    expect(zoneIds).toEqual([]);
  });

  it('keeps fields the API adds later in raw without failing', () => {
    const input = fullCampaign({ budget: { daily: 50 }, labels: ['x'] });
    const { row } = map(input);
    expect(row.raw).toEqual(input);
    expect(row.raw.budget).toEqual({ daily: 50 });
  });

  it('reads missing and null optional fields as null', () => {
    const { row } = map({ campaign_id: 5, notes: null });
    expect(row.name).toBeNull();
    expect(row.notes).toBeNull();
    expect(row.tier).toBeNull();
    expect(row.event_clicks).toBeNull();
  });

  it('reads numbers, ids and booleans sent as strings as their values', () => {
    const plain = map(fullCampaign());
    const encoded = map(stringEncoded(fullCampaign()));
    expect(encoded.problems.summary().count).toBe(0);
    expect({ ...encoded.row, raw: null }).toEqual({ ...plain.row, raw: null });
    expect(encoded.zoneIds).toEqual([11, 12]);
    expect(encoded.row.raw.tier).toBe('3');
    expect(map(fullCampaign({ is_active: 'true', is_archived: '0' })).row).toMatchObject({
      is_active: true,
      is_archived: false,
    });
  });

  it.each([
    ['tier', { tier: 'high' }, 'tier', { tier: null }],
    ['is_active', { is_active: 'yes' }, 'is_active', { is_active: null }],
    [
      'pricing.value',
      { pricing: { model: 'CPM', value: '2.5 EUR' } },
      'pricing.value',
      { pricing_value: null, pricing_model: 'CPM' },
    ],
    [
      'pacing as a non-empty array',
      { pacing: ['asap'] },
      'pacing',
      { pacing_speed: null, pacing_value: null },
    ],
    ['delivery.start', { delivery: { start: 1.5, end: 0 } }, 'delivery.start', { delivery_start: null }],
    [
      'event_counts.clicks',
      { event_counts: { clicks: -0.5 } },
      'event_counts.clicks',
      { event_clicks: null },
    ],
    ['name', { name: 42 }, 'name', { name: null }],
    ['weight beyond smallint', { weight: 40000 }, 'weight', { weight: null }],
    ['id past 2^53', { advertiser_id: '9007199254740993' }, 'advertiser_id', { advertiser_id: null }],
  ])('reads a wrong-typed %s as NULL and reports entity, id and field', (_label, patch, field, columns) => {
    const input = fullCampaign(patch);
    const { row, problems } = map(input);
    expect(row).toMatchObject({ ...columns, campaign_id: 862599431, ad_format: 'display' });
    expect(row.raw).toBe(input);
    const summary = problems.summary();
    expect(summary.count).toBe(1);
    expect(summary.examples[0]).toMatchObject({ entity: 'campaign', id: 862599431, field });
  });

  it('leaves an unreadable zone id out of the zones and reports it', () => {
    const { zoneIds, problems } = map(fullCampaign({ zone_ids: [1, 'two', '3'] }));
    expect(zoneIds).toEqual([1, 3]);
    expect(problems.summary().examples).toEqual([
      {
        entity: 'campaign',
        id: 862599431,
        field: 'zone_ids[1]',
        expected: 'an integer',
        value: '"two" (string)',
      },
    ]);
  });

  it('skips a campaign whose id cannot be read, reporting it with no id', () => {
    for (const [input, field] of [
      [{ name: 'x' }, 'campaign_id'],
      [{ campaign_id: -3 }, 'campaign_id'],
      [{ campaign_id: 'abc' }, 'campaign_id'],
      [[], '(object)'],
    ] as const) {
      const problems = new ProblemLog();
      expect(mapCampaign(input, problems)).toBeUndefined();
      expect(problems.summary()).toMatchObject({ count: 1, skipped: 1, examples: [{ id: null, field }] });
    }
    expect(map({ campaign_id: '7' }).row.campaign_id).toBe(7);
  });

  it('normalises only the spead spelling of pacing speed', () => {
    expect(normalizeSpeed('spead')).toBe('spread');
    expect(normalizeSpeed('spread')).toBe('spread');
    expect(normalizeSpeed('asap')).toBe('asap');
    expect(normalizeSpeed(null)).toBeNull();
  });
});

/** Maps a creative that must have a readable id; `problems` collects what it reported. */
function mapCreativeRow(input: unknown, listedUnder: number, problems = new ProblemLog()): CreativeRow {
  const row = mapCreative(input, listedUnder, problems);
  if (row === undefined) throw new Error('creative skipped');
  return row;
}

describe('mapCreative', () => {
  it('maps typed columns, data and targeting of a documented video creative', () => {
    const input = creative({ targeting: { devices: ['desktop'] } });
    const row = mapCreativeRow(input, 862599431);
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
    const row = mapCreativeRow(creative({ targeting: [], thumbnail: [], data: undefined }), 862599431);
    expect(row.targeting).toBeNull();
    expect(row.thumbnail_color).toBeNull();
    expect(row.data).toBeNull();
    expect(row.data_width).toBeNull();
  });

  it('takes the campaign from the listing when the creative omits campaign_id', () => {
    expect(mapCreativeRow(creative({ campaign_id: undefined }), 42).campaign_id).toBe(42);
  });

  it('stores a creative under the campaign it was listed under, reporting a campaign_id that disagrees', () => {
    const problems = new ProblemLog();
    expect(mapCreativeRow(creative(), 1, problems).campaign_id).toBe(1);
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
    const plain = mapCreativeRow(creative(), 862599431);
    const encoded = mapCreativeRow(stringEncoded(creative()), 862599431, problems);
    expect(problems.summary().count).toBe(0);
    expect({ ...encoded, raw: null, data: null }).toEqual({ ...plain, raw: null, data: null });
    expect(encoded.data).toMatchObject({ width: '1920', use_iframe: '1' });
  });

  it('reads a wrong-typed data.width as NULL, keeping the rest and reporting creative id and field', () => {
    const problems = new ProblemLog();
    const input = creative({ data: { width: '1920px', height: 1080, filehash: 'f' } });
    const row = mapCreativeRow(input, 862599431, problems);
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

describe('buildCatalogue', () => {
  it('keeps one row per id when paging showed an entity twice, the last copy winning', () => {
    const catalogue = buildCatalogue(
      {
        campaigns: [fullCampaign({ name: 'old' }), fullCampaign({ name: 'new' })],
        creativesByCampaign: new Map([[862599431, [creative({ name: 'a' }), creative({ name: 'b' })]]]),
      },
      new ProblemLog(),
    );
    expect(catalogue.campaigns.map((c) => c.row.name)).toEqual(['new']);
    expect(catalogue.creatives.map((c) => c.name)).toEqual(['b']);
  });

  it('drops creative listings of campaigns that are not in the campaign list', () => {
    const catalogue = buildCatalogue(
      {
        campaigns: [fullCampaign()],
        creativesByCampaign: new Map([[99, [creative({ campaign_id: 99, creative_id: 5 })]]]),
      },
      new ProblemLog(),
    );
    expect(catalogue.creatives).toEqual([]);
  });

  it('skips entities with an unreadable id and keeps the rest, counting what it skipped', () => {
    const problems = new ProblemLog();
    const catalogue = buildCatalogue(
      {
        campaigns: [
          fullCampaign(),
          fullCampaign({ campaign_id: null }),
          fullCampaign({ campaign_id: '5', tier: 'x' }),
        ],
        creativesByCampaign: new Map([
          [862599431, [creative(), creative({ creative_id: 'n/a' })]],
          [5, [creative({ campaign_id: '5', creative_id: '6' })]],
        ]),
      },
      problems,
    );
    expect(catalogue.campaigns.map((c) => c.row.campaign_id)).toEqual([862599431, 5]);
    expect(catalogue.creatives.map((c) => [c.creative_id, c.campaign_id])).toEqual([
      [210267475, 862599431],
      [6, 5],
    ]);
    expect(problems.summary()).toMatchObject({
      count: 3,
      skipped: 2,
      byField: { 'campaign campaign_id': 1, 'campaign tier': 1, 'creative creative_id': 1 },
    });
  });
});
