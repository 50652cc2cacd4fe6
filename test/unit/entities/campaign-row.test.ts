import { describe, expect, it } from 'vitest';
import { mapCampaign, normalizeSpeed } from '../../../src/warehouse/entities/campaign-row.js';
import { EntityFieldError } from '../../../src/warehouse/entities/errors.js';
import { bareCampaign, fullCampaign } from './fixtures.js';

describe('mapCampaign', () => {
  it('maps every field of a campaign with pricing, pacing and targeting set', () => {
    const { row, zoneIds } = mapCampaign(fullCampaign());
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
    const { row, zoneIds } = mapCampaign(bareCampaign());
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
    const { row } = mapCampaign(input);
    expect(row.raw).toEqual(input);
    expect(row.raw.budget).toEqual({ daily: 50 });
  });

  it('reads missing and null optional fields as null', () => {
    const { row } = mapCampaign({ campaign_id: 5, notes: null });
    expect(row.name).toBeNull();
    expect(row.notes).toBeNull();
    expect(row.tier).toBeNull();
    expect(row.event_clicks).toBeNull();
  });

  it.each([
    ['tier', { tier: 'high' }, 'tier'],
    ['is_active', { is_active: 'yes' }, 'is_active'],
    ['pricing.value', { pricing: { model: 'CPM', value: '2.5' } }, 'pricing.value'],
    ['pacing as a non-empty array', { pacing: ['asap'] }, 'pacing'],
    ['zone_ids element', { zone_ids: [1, 'two'] }, 'zone_ids[1]'],
    ['delivery.start', { delivery: { start: 1.5, end: 0 } }, 'delivery.start'],
    ['event_counts.clicks', { event_counts: { clicks: -0.5 } }, 'event_counts.clicks'],
    ['name', { name: 42 }, 'name'],
    ['weight beyond smallint', { weight: 40000 }, 'weight'],
  ])('fails on a wrong-typed %s with an error naming entity, id and field', (_label, patch, field) => {
    let caught: unknown;
    try {
      mapCampaign(fullCampaign(patch));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EntityFieldError);
    const e = caught as EntityFieldError;
    expect(e.entity).toBe('campaign');
    expect(e.id).toBe(862599431);
    expect(e.field).toBe(field);
    expect(e.message).toContain(`campaign 862599431: field ${field} is`);
  });

  it('fails on a missing or non-integer campaign_id', () => {
    expect(() => mapCampaign({ name: 'x' })).toThrow(/campaign \(unknown id\): field campaign_id/);
    expect(() => mapCampaign({ campaign_id: '7' })).toThrow(EntityFieldError);
    expect(() => mapCampaign([])).toThrow(/expected a JSON object/);
  });

  it('normalises only the spead spelling of pacing speed', () => {
    expect(normalizeSpeed('spead')).toBe('spread');
    expect(normalizeSpeed('spread')).toBe('spread');
    expect(normalizeSpeed('asap')).toBe('asap');
    expect(normalizeSpeed(null)).toBeNull();
  });
});
