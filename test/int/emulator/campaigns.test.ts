import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Campaign, RunningEmulator } from '../../../src/emulator/index.js';
import { call, NOW, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await start({ seed: 11 });
});
afterAll(() => emu.close());

const list = async (query = '') =>
  (await call(emu, 'GET', `/campaigns${query}`)).json as { items: Campaign[] };
const VALID_UPDATE = {
  name: 'Updated',
  is_active: true,
  folder_id: 5,
  tier: 3,
  weight: 40,
  zone_ids: [1, 2],
};

describe('emulator campaigns: reads', () => {
  it('lists campaigns as {items} with every field of the spec and its quirks', async () => {
    const { items } = await list();
    expect(items.length).toBe(20);
    const formats = new Set(items.map((c) => c.ad_format));
    expect(formats).toEqual(new Set(['display', 'native', 'vast', 'redirect']));
    for (const c of items) {
      expect(Object.keys(c).sort()).toEqual(
        [
          'campaign_id',
          'name',
          'ad_format',
          'advertiser_id',
          'conversion_tracker_id',
          'folder_id',
          'account_id_created',
          'account_id_modified',
          'created',
          'modified',
          'is_active',
          'is_archived',
          'notes',
          'tier',
          'weight',
          'zone_ids',
          'creative_ids',
          'delivery',
          'event_counts',
          'pricing',
          'pacing',
          'targeting',
          'creative_optimization',
          'metadata',
          'watchlist',
        ].sort(),
      );
      expect(String(c.campaign_id)).toMatch(/^\d{9}$/);
      expect(Number.isInteger(c.created) && c.created < 2e9).toBe(true);
      expect(typeof c.event_counts).toBe('object');
      expect(Array.isArray(c.event_counts)).toBe(false);
    }
    expect(items.some((c) => Array.isArray(c.pricing) && c.pricing.length === 0)).toBe(true);
    expect(items.some((c) => !Array.isArray(c.pricing))).toBe(true);
    expect(items.some((c) => Array.isArray(c.pacing))).toBe(true);
    expect(items.some((c) => Array.isArray(c.targeting) && c.targeting.length === 0)).toBe(true);
  });

  it('pages with limit and offset, defaulting to 100 and 0', async () => {
    const all = (await list()).items.map((c) => c.campaign_id);
    expect((await list('?limit=5')).items.map((c) => c.campaign_id)).toEqual(all.slice(0, 5));
    expect((await list('?limit=5&offset=18')).items.map((c) => c.campaign_id)).toEqual(all.slice(18));
    expect((await list('?offset=100')).items).toEqual([]);
    expect((await list('?limit=1000')).items).toHaveLength(20);
  });

  it('answers 400 for a zero limit, a limit beyond 2^53, or a non-integer offset', async () => {
    for (const q of ['?limit=0', '?limit=99999999999999999999', '?offset=-1', '?offset=abc', '?limit=2.5']) {
      const r = await call(emu, 'GET', `/campaigns${q}`);
      expect(r.status, q).toBe(400);
      expect((r.json as ErrorBody).error).toBe('bad_request');
    }
  });

  it('reads one campaign, 404 for an unknown id and 400 for a non-integer path id', async () => {
    const [first] = (await list('?limit=1')).items;
    const one = await call(emu, 'GET', `/campaigns/${first?.campaign_id}`);
    expect(one.status).toBe(200);
    expect(one.json).toEqual(first);
    const missing = await call(emu, 'GET', '/campaigns/123456789');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ status: 404, error: 'not_found' });
    expect((await call(emu, 'GET', '/campaigns/12ab')).status).toBe(400);
    expect((await call(emu, 'GET', '/campaigns/-5')).status).toBe(400);
  });

  it('answers 404 with a JSON body for an unknown path and 405 for a wrong method', async () => {
    expect((await call(emu, 'GET', '/zones')).status).toBe(404);
    const wrong = await call(emu, 'PATCH', '/campaigns');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, POST');
  });
});

describe('emulator campaigns: writes', () => {
  it('creates a campaign (201 with its id) that reads back with unset fields as []', async () => {
    const r = await call(emu, 'POST', '/campaigns', {
      body: { name: 'New', folder_id: 7, ad_format: 'native' },
    });
    expect(r.status).toBe(201);
    const id = (r.json as { campaign_id: number }).campaign_id;
    expect(String(id)).toMatch(/^\d{9}$/);
    const c = (await call(emu, 'GET', `/campaigns/${id}`)).json as Campaign;
    expect(c).toMatchObject({
      name: 'New',
      folder_id: 7,
      ad_format: 'native',
      pricing: [],
      pacing: [],
      targeting: [],
    });
    expect(c.created).toBe(NOW.getTime() / 1000);
  });

  it.each([
    [{ folder_id: 1, ad_format: 'display' }, 'name'],
    [{ name: 'x', ad_format: 'display' }, 'folder_id'],
    [{ name: 'x', folder_id: 'one', ad_format: 'display' }, 'folder_id'],
    [{ name: 'x', folder_id: 1 }, 'ad_format'],
    [{ name: 'x', folder_id: 1, ad_format: 'banner' }, 'ad_format'],
    [{ name: 3, folder_id: 1, ad_format: 'display' }, 'name'],
  ])('rejects the create body %j with 400 naming %s', async (body, field) => {
    const r = await call(emu, 'POST', '/campaigns', { body });
    expect(r.status).toBe(400);
    expect((r.json as ErrorBody).field).toBe(field);
  });

  it('rejects a body that is not JSON with 400', async () => {
    const r = await call(emu, 'POST', '/campaigns', { rawBody: '{"name": ' });
    expect(r.status).toBe(400);
  });

  it('updates a campaign (204, empty body) and stamps modified and account_id_modified', async () => {
    const [c] = (await list('?limit=1')).items as [Campaign];
    const r = await call(emu, 'PUT', `/campaigns/${c.campaign_id}`, {
      body: {
        ...VALID_UPDATE,
        pricing: { model: 'CPC', value: 0.25 },
        pacing: { event: 'clicks', period: 'day', speed: 'spead', value: 10 },
        delivery: { start: 0, end: 0 },
      },
    });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    const after = (await call(emu, 'GET', `/campaigns/${c.campaign_id}`)).json as Campaign;
    expect(after).toMatchObject({
      ...VALID_UPDATE,
      pricing: { model: 'CPC', value: 0.25 },
      modified: NOW.getTime() / 1000,
    });
    expect(after.pacing).toMatchObject({ speed: 'spead' });
    expect(after.account_id_modified).not.toBe(c.account_id_modified);
  });

  it('accepts string-encoded values in a campaign update, as the spec example sends them', async () => {
    const [, c] = (await list('?limit=2')).items as [Campaign, Campaign];
    const r = await call(emu, 'PUT', `/campaigns/${c.campaign_id}`, {
      body: {
        name: 'Strings',
        is_active: 'false',
        folder_id: '9',
        tier: '10',
        weight: '100',
        zone_ids: '[3,4]',
        pacing: '{"event":"impressions","period":"due_date","speed":"spread","value":"500"}',
      },
    });
    expect(r.status).toBe(204);
    const after = (await call(emu, 'GET', `/campaigns/${c.campaign_id}`)).json as Campaign;
    expect(after).toMatchObject({ is_active: false, folder_id: 9, tier: 10, weight: 100, zone_ids: [3, 4] });
    expect(after.pacing).toEqual({ event: 'impressions', period: 'due_date', speed: 'spread', value: 500 });
  });

  it.each([
    [{ ...VALID_UPDATE, tier: 0 }, 'tier'],
    [{ ...VALID_UPDATE, tier: 11 }, 'tier'],
    [{ ...VALID_UPDATE, weight: 0 }, 'weight'],
    [{ ...VALID_UPDATE, weight: 101 }, 'weight'],
    [{ ...VALID_UPDATE, is_active: 'yes' }, 'is_active'],
    [{ ...VALID_UPDATE, zone_ids: [1, 'x'] }, 'zone_ids[1]'],
    [{ ...VALID_UPDATE, zone_ids: undefined }, 'zone_ids'],
    [{ ...VALID_UPDATE, pricing: { model: 'CPA', value: 1 } }, 'pricing.model'],
    [{ ...VALID_UPDATE, pacing: { event: 'views', period: 'day', speed: 'asap', value: 1 } }, 'pacing.event'],
    [
      { ...VALID_UPDATE, pacing: { event: 'clicks', period: 'week', speed: 'asap', value: 1 } },
      'pacing.period',
    ],
    [
      { ...VALID_UPDATE, pacing: { event: 'clicks', period: 'day', speed: 'fast', value: 1 } },
      'pacing.speed',
    ],
    [{ ...VALID_UPDATE, delivery: { end: 5 } }, 'delivery.start'],
    [{ ...VALID_UPDATE, delivery: { start: 10, end: 5 } }, 'delivery.end'],
  ])('rejects the update %j with 400 naming %s', async (body, field) => {
    const [c] = (await list('?limit=1')).items as [Campaign];
    const r = await call(emu, 'PUT', `/campaigns/${c.campaign_id}`, { body });
    expect(r.status).toBe(400);
    expect((r.json as ErrorBody).field).toBe(field);
  });

  it('answers 404 when updating or deleting an unknown campaign', async () => {
    expect((await call(emu, 'PUT', '/campaigns/123456789', { body: VALID_UPDATE })).status).toBe(404);
    expect((await call(emu, 'DELETE', '/campaigns/123456789')).status).toBe(404);
  });

  it('deletes a campaign (204) and its creatives with it', async () => {
    const c = (await list()).items.at(-1) as Campaign;
    const creative = c.creative_ids[0];
    const r = await call(emu, 'DELETE', `/campaigns/${c.campaign_id}`);
    expect([r.status, r.text]).toEqual([204, '']);
    expect((await call(emu, 'GET', `/campaigns/${c.campaign_id}`)).status).toBe(404);
    expect((await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives/${creative}`)).status).toBe(404);
  });
});
