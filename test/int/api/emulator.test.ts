// Acceptance of the API client and report parsing against the emulator over real HTTP.
import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../helpers/api-client.js';
import { ApiError } from '../../../src/api/errors.js';
import { type Dimension, COUNTERS } from '../../../src/platform/config/dimensions.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { type ReportQuery, type ReportRow } from '../../../src/flatten/types.js';

const log: Array<{ endpoint: string; status: number; at: number }> = [];
let emu: RunningEmulator;
const clients: ApiClient[] = [];

beforeAll(async () => {
  emu = await startEmulator({
    seed: 1,
    cellsPerDay: 300,
    lateDataDays: 0,
    keys: [
      { key: 'campaigns-only', scopes: ['campaigns'] },
      { key: 'read-only', methods: ['GET'] },
    ],
    onRequest: (e) => log.push({ endpoint: e.endpoint, status: e.status, at: performance.now() }),
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await emu.close();
});
beforeEach(() => {
  emu.setFaults({});
  emu.resetStats();
  log.length = 0;
});

function client(o: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({
    baseUrl: emu.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    baseBackoffMs: 2,
    maxBackoffMs: 20,
    ...o,
  });
  clients.push(c);
  return c;
}

const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
const q = (dimensions: Dimension[], from: string, to = from): ReportQuery => ({
  dimensions,
  period: { start: from, end: to },
});
const totalRequests = () => Object.values(emu.stats().requests).reduce((a, b) => a + b, 0);

async function pull(c: ApiClient, query: ReportQuery): Promise<ReportRow[]> {
  const raw = await c.fetchReport(query);
  const parsed = parseReport(await raw.body.bytes(), query.dimensions, { strict: true });
  return parsed.rows;
}

describe('API client against the emulator', () => {
  it('pulls under 30% injected 500s and dropped connections return exactly the rows of a fault-free pull', async () => {
    const sets: Dimension[][] = [
      ['day'],
      ['day', 'campaign_id'],
      ['country', 'device', 'day'],
      ['zone_id', 'tier'],
    ];
    const queries = sets.flatMap((dims) => [0, 1, 2, 3].map((d) => q(dims, day(d))));
    const clean = client();
    const expected = await Promise.all(queries.map((query) => pull(clean, query)));
    expect(expected.every((rows) => rows.length > 0)).toBe(true);

    emu.setFaults({ failRate: 0.3, dropRate: 0.1, paths: ['/v2/reports'], seed: 11 });
    const faulty = client({ attempts: 15 });
    const got = await Promise.all(queries.map((query) => pull(faulty, query)));
    expect(got).toEqual(expected);
    const faults = emu.stats().faults;
    expect(faults.fail ?? 0).toBeGreaterThan(0);
    expect(faults.drop ?? 0).toBeGreaterThan(0);
  });

  const refusals: Array<[number, (c: () => ApiClient) => Promise<unknown>, RegExp]> = [
    [400, (c) => c().fetchReport(q(['day'], day(3), day(1))), /check its parameters/],
    [401, () => client({ apiKey: 'wrong-key' }).listCampaigns(), /check ADOPS_API_KEY/],
    [
      403,
      () => client({ apiKey: 'campaigns-only' }).fetchReport(q(['day'], day(0))),
      /lacks the scope, method or IP/,
    ],
    [403, () => client({ apiKey: 'read-only' }).deleteCampaign(1), /use a key allowed DELETE/],
    [404, (c) => c().getCampaign(1), /does not exist/],
  ];
  for (const [status, call, hint] of refusals) {
    it(`answers ${status} with exactly one request and a typed error with the hint (${hint.source})`, async () => {
      const error = await call(client).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toHaveProperty('name', 'ApiHttpError');
      expect(error).toMatchObject({ status, attempts: 1, retryable: false });
      expect((error as ApiError).hint).toMatch(hint);
      expect((error as ApiError).apiMessage).toBeTruthy();
      expect(totalRequests()).toBe(1);
    });
  }

  it('honours Retry-After: a 429 with Retry-After: 1 is not asked again before a second', async () => {
    emu.override({ path: '/v2/reports', status: 429, body: '{}', headers: { 'retry-after': '1' }, times: 1 });
    const rows = await pull(client(), q(['day'], day(0)));
    expect(rows.length).toBe(1);
    const reports = log.filter((e) => e.endpoint === 'GET /v2/reports');
    expect(reports.map((e) => e.status)).toEqual([429, 200]);
    expect(reports[1]!.at - reports[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('flattened rows sum to the totals and match the leaves, for random dimension sets and date ranges', async () => {
    const c = client();
    const dims = fc.shuffledSubarray(
      [
        'day',
        'hour',
        'campaign_id',
        'creative_id',
        'zone_id',
        'tier',
        'country',
        'device',
        'ad_format',
        'weekday',
      ] as Dimension[],
      { minLength: 1, maxLength: 3 },
    );
    await fc.assert(
      fc.asyncProperty(
        dims,
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 3 }),
        async (d, start, span) => {
          const raw = await c.fetchReport(q(d, day(start), day(start + span)));
          const body = await raw.body.bytes();
          const parsed = parseReport(body, d);
          expect(parsed.reconciliation.ok).toBe(true);
          expect(parsed.rows.length).toBe(countLeaves(JSON.parse(body.toString()).items));
          for (const [i, name] of COUNTERS.entries())
            expect(parsed.rows.reduce((s, r) => s + r.counters[i]!, 0)).toBe(parsed.totals[name]);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('malformed and truncated bodies yield typed errors, never rows', async () => {
    // The same broken body every time: retried once, then final (the repeat proves it stays).
    emu.setFaults({ malformedRate: 1, paths: ['/v2/reports'] });
    const malformed = await pull(client(), q(['day'], day(0))).catch((e: unknown) => e);
    expect(malformed).toBeInstanceOf(ApiError);
    expect(malformed).toHaveProperty('name', 'ApiResponseError');
    expect(malformed).toMatchObject({ retryable: false, attempts: 2 });
    expect(emu.stats().requests['GET /v2/reports']).toBe(2);

    emu.setFaults({ truncateRate: 1, paths: ['/v2/reports'] });
    const truncated = await pull(client({ attempts: 2 }), q(['day'], day(0))).catch((e: unknown) => e);
    expect(truncated).toBeInstanceOf(ApiError);
    expect(truncated).toHaveProperty('name', 'ApiTransportError');
    expect(emu.stats().requests['GET /v2/reports']).toBe(4);
  });

  it('wrongly shaped and wrongly typed bodies yield typed errors, never rows', async () => {
    const bodies = [
      '{"items":{"2026-01-01":{"ad_requests":"lots"}},"totals":{}}',
      '{"items":{"2026-01-01":[1,2]},"totals":{"ad_requests":0,"filled_impressions":0,"impressions":0,"measurable_impressions":0,"viewable_impressions":0}}',
      '{"items":{"2026-01-01":{"ad_requests":1}}}',
      '{"data":[]}',
      '{"items":{"01/02/2026":{"ad_requests":1,"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1}},"totals":{"ad_requests":1,"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1}}',
    ];
    for (const body of bodies) {
      emu.override({ path: '/v2/reports', status: 200, body, times: 1 });
      const error = await pull(client(), q(['day'], day(0))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReportFormatError);
      expect(['ReportFormatError', 'DimensionValueError']).toContain((error as ReportFormatError).name);
    }
  });

  it('lists every campaign and creative page by page', async () => {
    const c = client();
    const campaigns = [];
    for await (const page of c.campaigns(3)) campaigns.push(...page);
    expect(campaigns.length).toBeGreaterThan(3);
    expect(new Set(campaigns.map((x) => x.campaign_id)).size).toBe(campaigns.length);
    const first = campaigns[0]!;
    const creatives = [];
    for await (const page of c.creatives(first.campaign_id, 2)) creatives.push(...page);
    expect(creatives.map((x) => x.creative_id).sort()).toEqual([...(first.creative_ids ?? [])].sort());
  });

  it('creates, reads, updates and deletes a campaign and a creative', async () => {
    const c = client();
    const { campaign_id } = await c.createCampaign({
      name: 'helper test',
      folder_id: 1,
      ad_format: 'display',
    });
    await c.updateCampaign(campaign_id, {
      name: 'renamed',
      is_active: true,
      folder_id: 1,
      tier: 2,
      weight: 50,
      zone_ids: [],
    });
    expect((await c.getCampaign(campaign_id)).name).toBe('renamed');
    const { creative_id } = await c.createCreative(campaign_id, { name: 'banner', ad_type: 'image' });
    await c.updateCreative(campaign_id, creative_id, {
      name: 'banner 2',
      is_active: true,
      data: { filehash: 'a.png', width: 300, height: 250 },
    });
    expect((await c.getCreative(campaign_id, creative_id)).name).toBe('banner 2');
    await c.deleteCreative(campaign_id, creative_id);
    await c.deleteCampaign(campaign_id);
    await expect(c.getCampaign(campaign_id)).rejects.toMatchObject({ status: 404 });
  });
});

/** Counts objects holding counters, walking the parsed body independently of the flattener. */
function countLeaves(node: unknown): number {
  if (typeof node !== 'object' || node === null) return 0;
  if (!Array.isArray(node) && 'ad_requests' in node) return 1;
  return Object.values(node).reduce((n: number, child) => n + countLeaves(child), 0);
}
