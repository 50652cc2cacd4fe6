import { describe, expect, it } from 'vitest';
import { mapCampaign, normalizeSpeed } from '../../../src/catalogue/rows.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { bareCampaign, fullCampaign, stringEncoded } from './fixtures.js';
import type { MappedCampaign } from '../../../src/warehouse/catalogue/rows.js';

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
    expect(encoded.problems.count).toBe(0);
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
