import { describe, expect, it } from 'vitest';
import { encodeEntities, type EntityEncoding } from '../../../src/emulator/api/catalogue.js';

const OFF: EntityEncoding = { stringValues: false, emptyAsArray: false, sortKeys: false };
const campaign = (id: number) => ({
  campaign_id: id,
  name: 'C "1"',
  tier: 3,
  is_active: true,
  is_archived: false,
  zone_ids: [111111111, 222222222],
  delivery: { start: 0, end: 0 },
  pricing: { model: 'CPM', value: 2.5 },
  targeting: [],
  event_counts: { clicks: 0, impressions: 12 },
});
const creative = {
  creative_id: 300000002,
  campaign_id: 300000001,
  is_active: false,
  data: { width: 300, use_iframe: true, filehash: '12.png' },
  delivery: { start: 1700000000, end: 0 },
  thumbnail: {},
};
const encode = (value: unknown, q: Partial<EntityEncoding>) =>
  JSON.parse(encodeEntities(value, { ...OFF, ...q })) as Record<string, unknown>;

describe('emulator entity encoding', () => {
  it('is plain JSON.stringify with every quirk off', () => {
    expect(encodeEntities({ items: [campaign(1), creative] }, OFF)).toBe(
      JSON.stringify({ items: [campaign(1), creative] }),
    );
  });

  it('writes every number as a string and booleans as 1/0 for odd ids, true/false for even ones', () => {
    const odd = encode(campaign(100000001), { stringValues: true });
    expect(odd).toMatchObject({
      campaign_id: '100000001',
      tier: '3',
      is_active: '1',
      is_archived: '0',
      zone_ids: ['111111111', '222222222'],
      delivery: { start: '0', end: '0' },
      pricing: { model: 'CPM', value: '2.5' },
      event_counts: { clicks: '0', impressions: '12' },
      name: 'C "1"',
    });
    const even = encode(campaign(100000002), { stringValues: true });
    expect([even.is_active, even.is_archived]).toEqual(['true', 'false']);
    // A creative's own id decides, also for the booleans nested in its data.
    const c = encode(creative, { stringValues: true });
    expect([c.is_active, (c.data as Record<string, unknown>).use_iframe]).toEqual(['false', 'true']);
    expect((c.data as Record<string, unknown>).filehash).toBe('12.png');
  });

  it('sends empty objects and an unbounded delivery window as [], and nothing else', () => {
    const c = encode(creative, { emptyAsArray: true });
    expect(c.thumbnail).toEqual([]);
    expect(c.delivery).toEqual({ start: 1700000000, end: 0 });
    const k = encode(campaign(7), { emptyAsArray: true });
    expect([k.delivery, k.targeting]).toEqual([[], []]);
    expect(k.event_counts).toEqual({ clicks: 0, impressions: 12 });
  });

  it('sorts object keys alphabetically at every depth, keeping array order', () => {
    const text = encodeEntities({ items: [creative] }, { ...OFF, sortKeys: true });
    expect(text.indexOf('"campaign_id"')).toBeLessThan(text.indexOf('"creative_id"'));
    const c = (JSON.parse(text) as { items: Record<string, unknown>[] }).items[0] as Record<string, unknown>;
    expect(Object.keys(c)).toEqual([...Object.keys(creative)].sort());
    expect(Object.keys(c.data as object)).toEqual(['filehash', 'use_iframe', 'width']);
    const k = encode(campaign(1), { sortKeys: true });
    expect(k.zone_ids).toEqual([111111111, 222222222]);
  });
});
