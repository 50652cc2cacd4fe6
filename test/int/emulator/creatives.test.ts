import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Campaign, Creative, RunningEmulator } from '../../../src/emulator/index.js';
import { call, NOW, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
let campaigns: Campaign[];
const byFormat = (format: string) => campaigns.find((c) => c.ad_format === format) as Campaign;

beforeAll(async () => {
  emu = await start({ seed: 12 });
  campaigns = ((await call(emu, 'GET', '/campaigns')).json as { items: Campaign[] }).items;
});
afterAll(() => emu.close());

const IMAGE_DATA = { filehash: 'abc.png', width: 300, height: 250 };
const VALID = { name: 'Creative', is_active: true, data: IMAGE_DATA };

/** A fresh image creative in the first display campaign. */
async function newImage(): Promise<[Campaign, number]> {
  const c = byFormat('display');
  const r = await call(emu, 'POST', `/campaigns/${c.campaign_id}/creatives`, {
    body: { name: 'img', ad_type: 'image' },
  });
  expect(r.status).toBe(201);
  return [c, (r.json as { creative_id: number }).creative_id];
}

describe('emulator creatives: reads', () => {
  it('lists the creatives of a campaign with every field of the spec, thumbnail included', async () => {
    const c = campaigns[0] as Campaign;
    const r = await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives`);
    const items = (r.json as { items: Creative[] }).items;
    expect(items.map((x) => x.creative_id).sort()).toEqual([...c.creative_ids].sort());
    for (const x of items) {
      expect(Object.keys(x).sort()).toEqual(
        [
          'creative_id',
          'campaign_id',
          'name',
          'ad_type',
          'is_active',
          'account_id_created',
          'account_id_modified',
          'created',
          'modified',
          'weight',
          'data',
          'delivery',
          'targeting',
          'event_counts',
          'metadata',
          'thumbnail',
        ].sort(),
      );
      expect(x.thumbnail.average_color).toMatch(/^#[0-9a-f]{6}$/);
      expect(x.event_counts).toEqual([]);
    }
    const paged = await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives?limit=1&offset=1`);
    expect((paged.json as { items: Creative[] }).items).toEqual(items.slice(1, 2));
    expect((await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives?limit=0`)).status).toBe(400);
  });

  it('reads one creative; one under another campaign or an unknown id is 404', async () => {
    const [a, b] = campaigns as [Campaign, Campaign];
    const id = a.creative_ids[0];
    const one = await call(emu, 'GET', `/campaigns/${a.campaign_id}/creatives/${id}`);
    expect(one.status).toBe(200);
    expect((one.json as Creative).campaign_id).toBe(a.campaign_id);
    expect((await call(emu, 'GET', `/campaigns/${b.campaign_id}/creatives/${id}`)).status).toBe(404);
    expect((await call(emu, 'GET', `/campaigns/${a.campaign_id}/creatives/123456789`)).status).toBe(404);
    expect((await call(emu, 'GET', `/campaigns/123456789/creatives`)).status).toBe(404);
    expect((await call(emu, 'GET', `/campaigns/${a.campaign_id}/creatives/x1`)).status).toBe(400);
  });
});

describe('emulator creatives: create', () => {
  it.each([
    ['display', 'image'],
    ['display', 'zip'],
    ['native', 'json'],
    ['vast', 'wrapper'],
    ['redirect', 'url'],
  ])('creates a %s campaign creative of type %s (201 with its id)', async (format, adType) => {
    const c = byFormat(format);
    const r = await call(emu, 'POST', `/campaigns/${c.campaign_id}/creatives`, {
      body: { name: 'n', ad_type: adType },
    });
    expect(r.status).toBe(201);
    const id = (r.json as { creative_id: number }).creative_id;
    const read = (await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives/${id}`)).json as Creative;
    expect(read).toMatchObject({
      ad_type: adType,
      campaign_id: c.campaign_id,
      targeting: [],
      created: NOW.getTime() / 1000,
    });
    const campaign = (await call(emu, 'GET', `/campaigns/${c.campaign_id}`)).json as Campaign;
    expect(campaign.creative_ids).toContain(id);
  });

  it.each([
    ['native', 'image'],
    ['redirect', 'video'],
    ['vast', 'json'],
    ['display', 'url'],
  ])('rejects a %s campaign creative of type %s with 400', async (format, adType) => {
    const c = byFormat(format);
    const r = await call(emu, 'POST', `/campaigns/${c.campaign_id}/creatives`, {
      body: { name: 'n', ad_type: adType },
    });
    expect(r.status).toBe(400);
    expect((r.json as ErrorBody).field).toBe('ad_type');
  });

  it('rejects a create without name or ad_type with 400', async () => {
    const c = byFormat('display');
    expect(
      (
        (await call(emu, 'POST', `/campaigns/${c.campaign_id}/creatives`, { body: { ad_type: 'image' } }))
          .json as ErrorBody
      ).field,
    ).toBe('name');
    expect(
      (
        (await call(emu, 'POST', `/campaigns/${c.campaign_id}/creatives`, { body: { name: 'n' } }))
          .json as ErrorBody
      ).field,
    ).toBe('ad_type');
  });
});

describe('emulator creatives: update and delete', () => {
  it('updates data, delivery and targeting (204) and stamps modified', async () => {
    const [c, id] = await newImage();
    const targeting = {
      devices: ['desktop', 'mobile'],
      geo: { type: 'exclude', locations: { countries: ['US', 'DE'] } },
      languages: { type: 'include', items: 'en' },
      keywords: [['cars', 'bikes'], ['sale']],
      keyvalues: [
        [
          { key: 'age', operator: '>', value: '18' },
          { key: 'k', operator: '=', value: 'v' },
        ],
      ],
    };
    const body = {
      ...VALID,
      data: {
        ...IMAGE_DATA,
        alt_text: 'a',
        target_window: '_top',
        use_iframe: false,
        landing_page: 'https://x.example',
      },
      delivery: { start: 100, end: '' },
      targeting,
      weight: 70,
    };
    const r = await call(emu, 'PUT', `/campaigns/${c.campaign_id}/creatives/${id}`, { body });
    expect([r.status, r.text]).toEqual([204, '']);
    const read = (await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives/${id}`)).json as Creative;
    expect(read).toMatchObject({
      is_active: true,
      weight: 70,
      delivery: { start: 100, end: 0 },
      data: body.data,
    });
    expect(read.targeting).toEqual({ ...targeting, languages: { type: 'include', items: ['en'] } });
    expect(read.modified).toBe(NOW.getTime() / 1000);
  });

  it.each([
    [{ ...VALID, name: undefined }, 'name'],
    [{ ...VALID, is_active: undefined }, 'is_active'],
    [{ ...VALID, data: undefined }, 'data'],
    [{ ...VALID, data: { width: 1, height: 1 } }, 'data.filehash'],
    [{ ...VALID, data: { filehash: 'f', height: 1 } }, 'data.width'],
    [{ ...VALID, data: { filehash: 'f', width: 1, height: '1' } }, 'data.height'],
    [{ ...VALID, data: { ...IMAGE_DATA, target_window: '_new' } }, 'data.target_window'],
    [{ ...VALID, data: { ...IMAGE_DATA, use_iframe: 'yes' } }, 'data.use_iframe'],
    [{ ...VALID, delivery: { end: 5 } }, 'delivery.start'],
    [{ ...VALID, weight: 0 }, 'weight'],
    [{ ...VALID, ad_type: 'json' }, 'ad_type'],
    [{ ...VALID, targeting: { devices: ['tv'] } }, 'targeting.devices[0]'],
    [{ ...VALID, targeting: { geo: { type: 'only', locations: {} } } }, 'targeting.geo.type'],
    [{ ...VALID, targeting: { geo: { type: 'include' } } }, 'targeting.geo.locations'],
    [
      { ...VALID, targeting: { geo: { type: 'include', locations: { countries: ['USAA'] } } } },
      'targeting.geo.locations.countries[0]',
    ],
    [
      { ...VALID, targeting: { geo: { type: 'include', locations: { countries: ['us'] } } } },
      'targeting.geo.locations.countries[0]',
    ],
    [
      { ...VALID, targeting: { languages: { type: 'include', items: ['EN'] } } },
      'targeting.languages.items[0]',
    ],
    [{ ...VALID, targeting: { languages: { type: 'include' } } }, 'targeting.languages.items'],
    [{ ...VALID, targeting: { languages: { items: ['en'] } } }, 'targeting.languages.type'],
    [{ ...VALID, targeting: { keywords: ['cars'] } }, 'targeting.keywords[0]'],
    [{ ...VALID, targeting: { keywords: [['']] } }, 'targeting.keywords[0][0]'],
    [
      { ...VALID, targeting: { keyvalues: [[{ key: 'a', value: 'b' }]] } },
      'targeting.keyvalues[0][0].operator',
    ],
    [
      { ...VALID, targeting: { keyvalues: [[{ key: 'a', operator: '~~', value: 'b' }]] } },
      'targeting.keyvalues[0][0].operator',
    ],
    [
      { ...VALID, targeting: { keyvalues: [{ key: 'a', operator: '=', value: 'b' }] } },
      'targeting.keyvalues[0]',
    ],
    [{ ...VALID, targeting: { device: ['mobile'] } }, 'targeting.device'],
  ])('rejects the update %j with 400 naming %s', async (body, field) => {
    const [c, id] = await newImage();
    const r = await call(emu, 'PUT', `/campaigns/${c.campaign_id}/creatives/${id}`, { body });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: 400, error: 'bad_request', field });
    expect(typeof (r.json as ErrorBody).message).toBe('string');
  });

  it('accepts any data object for types the spec leaves open', async () => {
    const c = byFormat('native');
    const created = await call(emu, 'POST', `/campaigns/${c.campaign_id}/creatives`, {
      body: { name: 'n', ad_type: 'json' },
    });
    const id = (created.json as { creative_id: number }).creative_id;
    const r = await call(emu, 'PUT', `/campaigns/${c.campaign_id}/creatives/${id}`, {
      body: { name: 'n', is_active: false, data: { title: 'T' } },
    });
    expect(r.status).toBe(204);
  });

  it('deletes a creative (204); it is gone from the campaign', async () => {
    const [c, id] = await newImage();
    const r = await call(emu, 'DELETE', `/campaigns/${c.campaign_id}/creatives/${id}`);
    expect([r.status, r.text]).toEqual([204, '']);
    expect((await call(emu, 'GET', `/campaigns/${c.campaign_id}/creatives/${id}`)).status).toBe(404);
    expect((await call(emu, 'DELETE', `/campaigns/${c.campaign_id}/creatives/${id}`)).status).toBe(404);
    const campaign = (await call(emu, 'GET', `/campaigns/${c.campaign_id}`)).json as Campaign;
    expect(campaign.creative_ids).not.toContain(id);
  });
});
