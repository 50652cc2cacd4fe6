import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Campaign, Creative, RunningEmulator } from '../../../src/emulator/index.js';
import { call, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
let display: Campaign;
beforeAll(async () => {
  emu = await start({ seed: 13, catalogue: { campaigns: 8 } });
  const { items } = (await call(emu, 'GET', '/campaigns')).json as { items: Campaign[] };
  display = items.find((c) => c.ad_format === 'display') as Campaign;
});
beforeEach(() => emu.setQuirks({}));
afterAll(() => emu.close());

const UPDATE = { name: 'U', is_active: true, folder_id: 5, tier: 3, weight: 40, zone_ids: [1, 2] };
const IMAGE = { name: 'C', is_active: true, data: { filehash: 'a.png', width: 300, height: 250 } };
const MISSING = 123456789;
const fieldOf = (r: { json: unknown }) => (r.json as ErrorBody).field;

async function newImage(): Promise<number> {
  const r = await call(emu, 'POST', `/campaigns/${display.campaign_id}/creatives`, {
    body: { name: 'img', ad_type: 'image' },
  });
  return (r.json as { creative_id: number }).creative_id;
}

describe('emulator quirk strict: the rules the spec does not state', () => {
  it('takes any limit by default, and at most 1000 under strict', async () => {
    const big = await call(emu, 'GET', '/campaigns?limit=5000');
    expect([big.status, (big.json as { items: unknown[] }).items.length]).toEqual([200, 8]);
    emu.setQuirks({ strict: true });
    expect((await call(emu, 'GET', '/campaigns?limit=1000')).status).toBe(200);
    const capped = await call(emu, 'GET', '/campaigns?limit=1001');
    expect([capped.status, fieldOf(capped)]).toEqual([400, 'limit']);
  });

  it('serves a report over more than 366 days by default, and refuses it under strict', async () => {
    const path = '/reports?date_from=2024-01-01&date_until=2025-06-01&dimensions=month';
    expect((await call(emu, 'GET', path)).status).toBe(200);
    emu.setQuirks({ strict: true });
    const r = await call(emu, 'GET', path);
    expect([r.status, fieldOf(r)]).toEqual([400, 'date_until']);
  });

  it('keeps the memory guard on the cells of one report whatever the quirks', async () => {
    const big = await start({ cellsPerDay: 200_000 });
    try {
      const r = await call(big, 'GET', '/reports?date_from=2020-01-01&date_until=2020-12-31&dimensions=day');
      expect([r.status, fieldOf(r)]).toEqual([400, 'date_until']);
      expect((r.json as ErrorBody).message).toContain('cells');
    } finally {
      await big.close();
    }
  });

  it('accepts the 3-letter country codes of the spec example by default, only 2 letters under strict', async () => {
    const id = await newImage();
    const body = {
      ...IMAGE,
      targeting: { geo: { type: 'include', locations: { countries: ['USA', 'DE'] } } },
    };
    const path = `/campaigns/${display.campaign_id}/creatives/${id}`;
    expect((await call(emu, 'PUT', path, { body })).status).toBe(204);
    const read = (await call(emu, 'GET', path)).json as Creative;
    expect(read.targeting).toEqual({ geo: { type: 'include', locations: { countries: ['USA', 'DE'] } } });
    emu.setQuirks({ strict: true });
    const r = await call(emu, 'PUT', path, { body });
    expect([r.status, fieldOf(r)]).toEqual([400, 'targeting.geo.locations.countries[0]']);
  });

  it.each([
    ['PUT', `/campaigns/${MISSING}`, {}, 'zone_ids'],
    ['POST', `/campaigns/${MISSING}/creatives`, { name: 'x' }, 'ad_type'],
    ['GET', `/campaigns/${MISSING}/creatives?limit=0`, undefined, 'limit'],
  ])('%s %s with a bad request: 400 by default, 404 under strict', async (method, path, body, field) => {
    const loose = await call(emu, method, path, body === undefined ? {} : { body });
    expect([loose.status, fieldOf(loose)]).toEqual([400, field]);
    emu.setQuirks({ strict: true });
    expect((await call(emu, method, path, body === undefined ? {} : { body })).status).toBe(404);
  });

  it('checks a creative update before looking up the creative by default, after it under strict', async () => {
    const path = `/campaigns/${display.campaign_id}/creatives/${MISSING}`;
    const loose = await call(emu, 'PUT', path, { body: { ...IMAGE, weight: 0 } });
    expect([loose.status, fieldOf(loose)]).toEqual([400, 'weight']);
    // Checks that need the entity (the data schema of its ad_type) cannot come first: 404.
    expect((await call(emu, 'PUT', path, { body: { ...IMAGE, data: {} } })).status).toBe(404);
    expect((await call(emu, 'PUT', path, { body: IMAGE })).status).toBe(404);
    emu.setQuirks({ strict: true });
    expect((await call(emu, 'PUT', path, { body: { ...IMAGE, weight: 0 } })).status).toBe(404);
  });
});

describe('emulator quirk unknownFields', () => {
  const campaignPath = () => `/campaigns/${display.campaign_id}`;

  it.each([
    ['PUT', 'campaign update', 'colour', () => campaignPath(), { ...UPDATE, colour: 'red' }],
    [
      'PUT',
      'campaign pricing',
      'pricing.cap',
      () => campaignPath(),
      { ...UPDATE, pricing: { model: 'CPM', value: 1, cap: 2 } },
    ],
    [
      'PUT',
      'campaign delivery',
      'delivery.stop',
      () => campaignPath(),
      { ...UPDATE, delivery: { start: 0, stop: 9 } },
    ],
    [
      'POST',
      'campaign create',
      'tier',
      () => '/campaigns',
      { name: 'n', folder_id: 1, ad_format: 'display', tier: 2 },
    ],
    [
      'POST',
      'creative create',
      'size',
      () => `${campaignPath()}/creatives`,
      { name: 'n', ad_type: 'image', size: 1 },
    ],
  ])(
    '%s %s: dropped silently by default, 400 naming %s under reject',
    async (method, _what, field, path, body) => {
      const dropped = await call(emu, method, path(), { body });
      expect(dropped.status).toBeLessThan(300);
      emu.setQuirks({ unknownFields: 'reject' });
      const r = await call(emu, method, path(), { body });
      expect([r.status, fieldOf(r)]).toEqual([400, field]);
    },
  );

  it('rejects an unknown field of image-style data, and of a creative update, under reject', async () => {
    const id = await newImage();
    const path = `${campaignPath()}/creatives/${id}`;
    const extraData = { ...IMAGE, data: { ...IMAGE.data, depth: 3 } };
    expect((await call(emu, 'PUT', path, { body: extraData })).status).toBe(204);
    expect(((await call(emu, 'GET', path)).json as Creative).data).not.toHaveProperty('depth');
    emu.setQuirks({ unknownFields: 'reject' });
    expect(fieldOf(await call(emu, 'PUT', path, { body: extraData }))).toBe('data.depth');
    expect(fieldOf(await call(emu, 'PUT', path, { body: { ...IMAGE, colour: 1 } }))).toBe('colour');
    expect((await call(emu, 'PUT', path, { body: IMAGE })).status).toBe(204);
  });

  it('the strict profile turns on strict and reject together', async () => {
    const strict = await start({ profile: 'strict' });
    try {
      expect(strict.quirks()).toMatchObject({ strict: true, unknownFields: 'reject', reportParams: 'any' });
      const r = await call(strict, 'GET', '/campaigns?limit=1001');
      expect(r.status).toBe(400);
    } finally {
      await strict.close();
    }
  });
});
