import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../helpers/api-client.js';
import { ApiError } from '../../../src/api/errors.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { syncClientOptions } from '../../../src/catalogue/read.js';
import { runEntitySync } from '../../../src/catalogue/sync.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { createLocalGate } from '../../../src/limits/limiter.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { expectTablesMatchApi, readApi, snapshot } from './expect-tables.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const logger = createLogger({ level: 'silent', secrets: [] });
let db: TestDatabase;
let emu: RunningEmulator;
let api: ApiClient;
const gate = createLocalGate();

beforeAll(async () => {
  [db, emu] = await Promise.all([
    createTestDatabase(),
    startEmulator({
      seed: 7,
      cellsPerDay: 10,
      catalogue: { campaigns: 9, creativesPerCampaign: 3, zones: 20 },
    }),
  ]);
  // As a worker builds it: one attempt per call, the sync's requester retries.
  api = createApiClient({ baseUrl: emu.url, apiKey: 'demo-key', auth: 'bearer', ...syncClientOptions(gate) });
});
afterAll(async () => {
  await api?.close();
  await emu?.close();
  await db?.drop();
});

/** A sync with small pages, so paging is exercised with a small catalogue, and fast retries. */
const sync = (campaignConcurrency = 3, attempts = 12) =>
  runEntitySync({
    wh: warehouseOf(db.pool, S),
    api,
    logger,
    gate,
    campaignConcurrency,
    pageSize: 4,
    retry: { attempts, baseMs: 1, maxMs: 5 },
  });

async function deletedIds(table: 'campaigns' | 'creatives', key: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `SELECT ${key} AS id FROM ${S}.${table} WHERE deleted_at IS NOT NULL ORDER BY 1`,
  );
  return rows.map((r) => Number(r.id));
}

describe('runEntitySync against the emulator', () => {
  it('loads campaigns with pricing, pacing and targeting [] and with them set', async () => {
    const result = await sync();
    expect(result).toMatchObject({ campaigns: 9, creatives: 27, deleted: 0, revived: 0, problems: 0 });
    const { campaigns } = await expectTablesMatchApi(db.pool, S, api);
    const unset = campaigns.filter((c) => Array.isArray(c.pricing));
    const set = campaigns.filter((c) => !Array.isArray(c.pricing));
    expect(unset.length).toBeGreaterThan(0);
    expect(set.length).toBeGreaterThan(0);
    const { rows } = await db.pool.query(
      `SELECT campaign_id::text AS id, pricing_model IS NULL AND pricing_value IS NULL AND pacing_speed IS NULL
              AND pacing_value IS NULL AND targeting IS NULL AS all_null,
              pricing_model IS NOT NULL AND pacing_speed IS NOT NULL AND targeting IS NOT NULL AS all_set
         FROM ${S}.campaigns`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const c of unset) expect(byId.get(String(c.campaign_id))?.all_null).toBe(true);
    for (const c of set) expect(byId.get(String(c.campaign_id))?.all_set).toBe(true);
  });

  it('after create, update and delete through the API client, a sync makes the tables equal the API', async () => {
    await sync();
    const before = await readApi(api);
    const [bare, priced, doomed] = [
      before.campaigns.find((c) => Array.isArray(c.pricing)),
      before.campaigns.find((c) => !Array.isArray(c.pricing) && c.ad_format !== 'native'),
      before.campaigns.at(-1),
    ];
    if (bare === undefined || priced === undefined || doomed === undefined || doomed === bare)
      throw new Error('seed 7 lacks the campaigns this test needs');

    // Create a campaign with a creative, both then updated with every writable field.
    const { campaign_id: newId } = await api.createCampaign({
      name: 'New, "quoted"',
      folder_id: 5,
      ad_format: 'display',
    });
    await api.updateCampaign(newId, {
      name: 'New, "quoted" v2',
      is_active: true,
      folder_id: 6,
      tier: 2,
      weight: 77,
      zone_ids: [bare.zone_ids?.[0] ?? 1],
      advertiser_id: 4242,
      delivery: { start: 1767225600, end: 0 },
      pricing: { model: 'CPC', value: 0.35 },
      pacing: { event: 'clicks', period: 'due_date', speed: 'spead', value: 500 },
    });
    const { creative_id: newCreative } = await api.createCreative(newId, { name: 'Img', ad_type: 'image' });
    await api.updateCreative(newId, newCreative, {
      name: 'Img v2',
      is_active: true,
      data: { filehash: 'f_1.png', width: 300, height: 250, landing_page: 'https://x.example/?a="b"' },
      delivery: { start: 1767225600, end: 1769904000 },
      targeting: { devices: ['mobile'], geo: { type: 'include', locations: { countries: ['DE'] } } },
    });
    // Set pricing on a campaign that had none; delete a whole campaign, and one creative of another.
    await api.updateCampaign(bare.campaign_id, {
      name: `${bare.name ?? ''} priced`,
      is_active: false,
      folder_id: bare.folder_id ?? 1,
      tier: 10,
      weight: 1,
      zone_ids: [],
      pricing: { model: 'CPM', value: 12.5 },
    });
    await api.deleteCampaign(doomed.campaign_id);
    const doomedCreatives = before.creatives.filter((k) => k.campaign_id === doomed.campaign_id);
    const lostCreative = before.creatives.find((k) => k.campaign_id === priced.campaign_id);
    if (lostCreative === undefined) throw new Error('seed 7 campaign without creatives');
    await api.deleteCreative(priced.campaign_id, lostCreative.creative_id);

    const result = await sync();
    expect(result).toMatchObject({ campaigns: 9, creatives: 27 - 3 - 1 + 1, deleted: 1 + 3 + 1, revived: 0 });
    await expectTablesMatchApi(db.pool, S, api);
    expect(await deletedIds('campaigns', 'campaign_id')).toEqual([doomed.campaign_id]);
    expect(await deletedIds('creatives', 'creative_id')).toEqual(
      [...doomedCreatives.map((k) => k.creative_id), lostCreative.creative_id].sort((a, b) => a - b),
    );
    // Soft-deleted rows keep their last known values.
    const { rows } = await db.pool.query(`SELECT name FROM ${S}.campaigns WHERE campaign_id = $1`, [
      doomed.campaign_id,
    ]);
    expect(rows[0]?.name).toBe(doomed.name);
  });

  it('retries 500s during paging and still loads the whole catalogue', async () => {
    const { campaign_id } = await api.createCampaign({ name: 'Under fire', folder_id: 9, ad_format: 'vast' });
    emu.resetStats();
    emu.setFaults({ failRate: 0.35, paths: ['/v2/campaigns'], seed: 11 });
    try {
      await sync(4);
    } finally {
      emu.setFaults({});
    }
    expect(emu.stats().faults.fail ?? 0).toBeGreaterThan(0);
    const { campaigns } = await expectTablesMatchApi(db.pool, S, api);
    expect(campaigns.map((c) => c.campaign_id)).toContain(campaign_id);
  });

  it('writes nothing when 500s outlast the retries, however far the paging got', async () => {
    await sync();
    const before = await snapshot(db.pool, S);
    const { campaigns } = await readApi(api);
    const last = campaigns.at(-1);
    if (last === undefined) throw new Error('no campaigns');
    await api.createCampaign({ name: 'Never seen', folder_id: 3, ad_format: 'redirect' });
    await api.deleteCampaign(campaigns[0]?.campaign_id ?? 0);
    // Campaign pages and most creative listings succeed; one listing always fails.
    emu.setFaults({ failRate: 1, paths: [`/v2/campaigns/${last.campaign_id}/creatives`] });
    emu.resetStats();
    try {
      const error = await sync(3, 6).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(500);
    } finally {
      emu.setFaults({});
    }
    expect(emu.stats().faults['GET /v2/campaigns/:id/creatives']).toBe(6);
    expect(await snapshot(db.pool, S)).toEqual(before);
    // A sync that will not be tried again drops its checkpoint and says why it failed.
    const { rows } = await db.pool.query(
      `SELECT r.status, r.error, (SELECT count(*)::int FROM ${S}.entity_sync_pages p WHERE p.run_id = r.run_id) AS pages
         FROM ${S}.entity_sync_runs r ORDER BY started_at DESC LIMIT 1`,
    );
    expect(rows[0]).toMatchObject({ status: 'failed', pages: 0 });
    expect(rows[0]?.error).toMatch(/HTTP 500/);
  });

  it('keeps unknown fields in the jsonb, stores a wrong-typed field as NULL with the problem recorded, and revives', async () => {
    await sync();
    const { campaigns } = await readApi(api);
    const target = campaigns[0];
    if (target === undefined) throw new Error('no campaigns');

    // The API grows a field: the sync keeps it. Serving only this campaign soft-deletes the rest.
    const grown = { ...target, budget_caps: { daily: 10 }, labels: ['a'] };
    emu.override({ path: '/v2/campaigns', status: 200, body: JSON.stringify({ items: [grown] }) });
    const shrunk = await sync();
    expect(shrunk.campaigns).toBe(1);
    const live = await db.pool.query(
      `SELECT campaign_id::int AS id FROM ${S}.campaigns WHERE deleted_at IS NULL`,
    );
    expect(live.rows).toEqual([{ id: target.campaign_id }]);
    const { rows } = await db.pool.query(`SELECT raw FROM ${S}.campaigns WHERE campaign_id = $1`, [
      target.campaign_id,
    ]);
    expect(rows[0]?.raw).toEqual(grown);

    // A known field changes type: that column is NULL, the rest of the row and raw are stored,
    // and the run records the problem for adops status.
    const broken = { ...target, tier: 'high', name: 'Renamed' };
    emu.override({ path: '/v2/campaigns', status: 200, body: JSON.stringify({ items: [broken] }) });
    const result = await sync();
    expect(result).toMatchObject({ campaigns: 1, problems: 1, skipped: 0 });
    const stored = await db.pool.query(`SELECT tier, name, raw FROM ${S}.campaigns WHERE campaign_id = $1`, [
      target.campaign_id,
    ]);
    expect(stored.rows[0]).toEqual({ tier: null, name: 'Renamed', raw: broken });
    const run = await db.pool.query(
      `SELECT problem_count, problems FROM ${S}.entity_sync_runs WHERE status = 'written' ORDER BY finished_at DESC LIMIT 1`,
    );
    expect(run.rows[0]?.problem_count).toBe(1);
    expect(run.rows[0]?.problems).toMatchObject({
      count: 1,
      byField: { 'campaign tier': 1 },
      examples: [{ entity: 'campaign', id: target.campaign_id, field: 'tier', value: '"high" (string)' }],
    });

    // Back to normal: every campaign returns, and is revived.
    const back = await sync();
    expect(back.revived).toBeGreaterThanOrEqual(campaigns.length - 1);
    await expectTablesMatchApi(db.pool, S, api);
  });

  it('stores a catalogue sent with numbers and booleans as strings, [] for empty objects and sorted keys exactly like the plain one', async () => {
    const typedColumns = async () => {
      const out: unknown[] = [];
      for (const [table, key] of [
        ['campaigns', 'campaign_id'],
        ['creatives', 'creative_id'],
      ] as const) {
        const { rows } = await db.pool.query(`SELECT * FROM ${S}.${table} ORDER BY ${key}`);
        // The jsonb columns (raw, data, targeting) keep the API's own encoding: compare the rest.
        out.push(rows.map(({ raw: _r, data: _d, targeting: _t, synced_at: _s, ...typed }) => typed));
      }
      const zones = await db.pool.query(`SELECT * FROM ${S}.campaign_zones ORDER BY 1, 2`);
      return [...out, zones.rows];
    };
    emu.setQuirks({ stringValues: true, emptyAsArray: true, sortKeys: true });
    let encoded;
    try {
      const result = await sync();
      expect(result.problems).toBe(0);
      encoded = await typedColumns();
      const { rows } = await db.pool.query(`SELECT raw FROM ${S}.campaigns WHERE deleted_at IS NULL LIMIT 1`);
      expect(typeof rows[0]?.raw.campaign_id).toBe('string');
    } finally {
      emu.setQuirks({});
    }
    await sync();
    expect(encoded).toEqual(await typedColumns());
    await expectTablesMatchApi(db.pool, S, api);
  });

  it('stores a name with a NUL and notes with a lone surrogate as Postgres can hold them, naming entity and field in a warning', async () => {
    // A NUL in a campaign name and a lone surrogate in a creative name, through the API's own POSTs.
    const { campaign_id: nulId } = await api.createCampaign({
      name: 'Spring\u0000Sale',
      folder_id: 3,
      ad_format: 'display',
    });
    const { creative_id: loneId } = await api.createCreative(nulId, {
      name: 'Banner \udc00 300x250',
      ad_type: 'image',
    });
    // Campaign notes cannot be written through the API: serve them (and a NUL in an unknown
    // field's key) on the campaign listing, as a server holding such data would.
    const { campaigns } = await readApi(api);
    const served = campaigns.map((c) =>
      c.campaign_id === nulId ? { ...c, notes: 'Q2 \ud83d plan\u0000', ['lab\u0000el']: 'x' } : c,
    );
    emu.override({ path: '/v2/campaigns', status: 200, body: JSON.stringify({ items: served }), times: 1 });
    const lines: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n').filter(Boolean)));
    const result = await runEntitySync({
      wh: warehouseOf(db.pool, S),
      api,
      logger: createLogger({ level: 'warn', secrets: [], destination: stream, pretty: false }),
      gate,
      pageSize: 100,
      retry: { attempts: 3, baseMs: 1, maxMs: 5 },
    });
    expect(result).toMatchObject({ campaigns: served.length, skipped: 0 });

    // Typed columns and jsonb hold the same repaired text: NUL removed, U+FFFD for the surrogate.
    const campaign = await db.pool.query(
      `SELECT name, notes, raw->>'name' AS raw_name, raw->>'notes' AS raw_notes, raw ? 'label' AS label
         FROM ${S}.campaigns WHERE campaign_id = $1`,
      [nulId],
    );
    expect(campaign.rows[0]).toEqual({
      name: 'SpringSale',
      notes: 'Q2 \ufffd plan',
      raw_name: 'SpringSale',
      raw_notes: 'Q2 \ufffd plan',
      label: true,
    });
    const creative = await db.pool.query(
      `SELECT name, raw->>'name' AS raw_name FROM ${S}.creatives WHERE creative_id = $1`,
      [loneId],
    );
    expect(creative.rows[0]).toEqual({ name: 'Banner \ufffd 300x250', raw_name: 'Banner \ufffd 300x250' });

    // Each repair is counted, recorded with the run for adops status, and named in the warning.
    const run = await db.pool.query(
      `SELECT problems FROM ${S}.entity_sync_runs WHERE status = 'written' ORDER BY finished_at DESC LIMIT 1`,
    );
    const examples = (run.rows[0]?.problems as { examples: { entity: string; id: number; field: string }[] })
      .examples;
    // A key loses its NUL too; the field is named as stored.
    expect(examples.map((e) => `${e.entity} ${e.id} ${e.field}`).sort()).toEqual(
      [
        `campaign ${nulId} label`,
        `campaign ${nulId} name`,
        `campaign ${nulId} notes`,
        `creative ${loneId} name`,
      ].sort(),
    );
    const warning = lines.find((l) => l.includes(`campaign ${nulId}: field name`));
    expect(warning).toBeDefined();
    expect(warning).toContain(`creative ${loneId}: field name`);
    expect(warning).toContain(`campaign ${nulId}: field notes`);
  });

  it('a sync resumed from a checkpoint that staged such text stores and reports it as the first try would', async () => {
    const { campaigns } = await readApi(api);
    const nul = campaigns.find((c) => c.name === 'Spring\u0000Sale');
    const other = campaigns.find((c) => c.campaign_id !== nul?.campaign_id);
    if (nul === undefined || other === undefined)
      throw new Error('the test before did not create its campaign');
    const runId = `resume-${Date.now()}`;
    const resumable = {
      wh: warehouseOf(db.pool, S),
      api,
      logger,
      gate,
      runId,
      resumable: true,
      pageSize: 100,
    };
    // The first try stages the campaign page (with the NUL), then fails on one creative listing.
    emu.setFaults({ failRate: 1, paths: [`/v2/campaigns/${other.campaign_id}/creatives`] });
    try {
      await expect(
        runEntitySync({ ...resumable, retry: { attempts: 2, baseMs: 1, maxMs: 2 } }),
      ).rejects.toThrow(/500/);
    } finally {
      emu.setFaults({});
    }
    const staged = await db.pool.query(
      `SELECT jsonb_typeof(items) AS type FROM ${S}.entity_sync_pages WHERE run_id = $1 AND listing = 0`,
      [runId],
    );
    // Kept exact: jsonb cannot hold the NUL, so the page is staged as its JSON text.
    expect(staged.rows).toEqual([{ type: 'string' }]);
    const result = await runEntitySync({ ...resumable, retry: { attempts: 2, baseMs: 1, maxMs: 2 } });
    expect(result.resumedPages).toBeGreaterThan(0);
    const run = await db.pool.query(`SELECT problems FROM ${S}.entity_sync_runs WHERE run_id = $1`, [runId]);
    expect(run.rows[0]?.problems.examples).toContainEqual(
      expect.objectContaining({ entity: 'campaign', id: nul.campaign_id, field: 'name', repaired: true }),
    );
    const stored = await db.pool.query(`SELECT name FROM ${S}.campaigns WHERE campaign_id = $1`, [
      nul.campaign_id,
    ]);
    expect(stored.rows).toEqual([{ name: 'SpringSale' }]);
  });
});
