import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Campaign, RunningEmulator } from '../../../src/emulator/index.js';
import { encodingDiff } from '../../unit/emulator/decode.js';
import { call, start } from './helpers.js';

let emu: RunningEmulator;
let faithful: Campaign[];
beforeAll(async () => {
  emu = await start({ seed: 14, catalogue: { campaigns: 12 } });
  faithful = ((await call(emu, 'GET', '/campaigns')).json as { items: Campaign[] }).items;
});
beforeEach(() => emu.setQuirks({}));
afterAll(() => emu.close());

type Json = Record<string, unknown>;
const listing = async (path = '/campaigns') =>
  ((await call(emu, 'GET', path)).json as { items: Json[] }).items;

/** Every value at a path of an entity: 'zone_ids[]' spreads an array. */
function valuesAt(items: Json[], path: string): unknown[] {
  return items.flatMap((item) => {
    let values: unknown[] = [item];
    for (const part of path.split('.')) {
      const spread = part.endsWith('[]');
      const key = spread ? part.slice(0, -2) : part;
      values = values.flatMap((v) => {
        const next = (v as Json | undefined)?.[key];
        return spread && Array.isArray(next) ? next : next === undefined ? [] : [next];
      });
    }
    return values;
  });
}

describe('emulator quirk stringValues in entities', () => {
  it('sends every integer field of campaigns as a string of digits, and booleans in both string forms', async () => {
    emu.setQuirks({ stringValues: true });
    const items = await listing();
    const integers = [
      'campaign_id',
      'advertiser_id',
      'conversion_tracker_id',
      'folder_id',
      'account_id_created',
      'account_id_modified',
      'created',
      'modified',
      'tier',
      'weight',
      'zone_ids[]',
      'creative_ids[]',
      'delivery.start',
      'delivery.end',
      'event_counts.clicks',
      'event_counts.impressions',
      'pacing.value',
    ];
    for (const path of integers) {
      const values = valuesAt(items, path);
      expect(values.length, path).toBeGreaterThan(0);
      for (const v of values) expect(v, path).toMatch(/^\d+$/);
    }
    const booleans = new Set(valuesAt(items, 'is_active').concat(valuesAt(items, 'is_archived')));
    expect(booleans).toEqual(new Set(['1', '0', 'true', 'false']));
    expect(items.flatMap((c, i) => encodingDiff(faithful[i], c, `items[${i}]`))).toEqual([]);
  });

  it('sends creative ids, weight, data width/height and use_iframe as strings', async () => {
    const c = faithful.find((x) => x.ad_format === 'display') as Campaign;
    const plain = await listing(`/campaigns/${c.campaign_id}/creatives`);
    emu.setQuirks({ stringValues: true });
    const items = await listing(`/campaigns/${c.campaign_id}/creatives`);
    for (const path of ['creative_id', 'campaign_id', 'weight', 'created', 'data.width', 'data.height'])
      for (const v of valuesAt(items, path)) expect(v, path).toMatch(/^\d+$/);
    for (const v of valuesAt(items, 'data.use_iframe')) expect(['1', '0', 'true', 'false']).toContain(v);
    expect(encodingDiff(plain, items)).toEqual([]);
    const one = (await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives/${c.creative_ids[0]}`)).json;
    expect(one).toEqual(items.find((x) => x.creative_id === String(c.creative_ids[0])));
  });

  it('answers a create with the new id as a string', async () => {
    emu.setQuirks({ stringValues: true });
    const r = await call(emu, 'POST', '/campaigns', {
      body: { name: 'n', folder_id: 1, ad_format: 'native' },
    });
    expect(r.status).toBe(201);
    expect((r.json as Json).campaign_id).toMatch(/^\d{9}$/);
    const read = await call(emu, 'GET', `/campaigns/${(r.json as Json).campaign_id as string}`);
    expect((read.json as Json).tier).toBe('5');
  });
});

describe('emulator quirks emptyAsArray and sortKeys in entities', () => {
  it('sends unset delivery and empty data as [] for new entities', async () => {
    const created = await call(emu, 'POST', '/campaigns', {
      body: { name: 'empty', folder_id: 1, ad_format: 'display' },
    });
    const id = (created.json as { campaign_id: number }).campaign_id;
    const c = await call(emu, 'POST', `/campaigns/${id}/creatives`, {
      body: { name: 'c', ad_type: 'image' },
    });
    const creativeId = (c.json as { creative_id: number }).creative_id;
    const plain = (await call(emu, 'GET', `/campaigns/${id}/creatives/${creativeId}`)).json as Json;
    expect([plain.data, plain.delivery]).toEqual([{}, { start: 0, end: 0 }]);
    emu.setQuirks({ emptyAsArray: true });
    const read = (await call(emu, 'GET', `/campaigns/${id}/creatives/${creativeId}`)).json as Json;
    expect([read.data, read.delivery, read.targeting]).toEqual([[], [], []]);
    expect(((await call(emu, 'GET', `/campaigns/${id}`)).json as Json).delivery).toEqual([]);
    expect(encodingDiff(plain, read)).toEqual([]);
  });

  it('writes entity keys in alphabetical order, in the bytes on the wire', async () => {
    emu.setQuirks({ sortKeys: true });
    const r = await call(emu, 'GET', `/campaigns/${faithful[1]?.campaign_id}`);
    const topKeys = [...r.text.matchAll(/"([a-z_]+)":/g)]
      .map((m) => m[1] ?? '')
      .filter((k) => k in (r.json as Json));
    const order = [...new Set(topKeys)];
    expect(order).toEqual([...order].sort());
    expect(order[0]).toBe('account_id_created');
    expect(encodingDiff(faithful[1], r.json)).toEqual([]);
  });
});
