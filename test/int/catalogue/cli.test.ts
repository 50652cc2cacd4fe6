import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../helpers/api-client.js';
import { main } from '../../../src/cli/main.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { runEntitySync } from '../../../src/catalogue/sync.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { closeConnection, workerConnection } from '../../../src/platform/queue/connection.js';
import { ENTITY_QUEUE } from '../../../src/platform/queue/jobs.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let db: TestDatabase;
let emu: RunningEmulator;

beforeAll(async () => {
  [db, emu] = await Promise.all([
    createTestDatabase(),
    startEmulator({
      seed: 3,
      cellsPerDay: 10,
      catalogue: { campaigns: 4, creativesPerCampaign: 2, zones: 10 },
    }),
  ]);
});
afterAll(async () => {
  await emu?.close();
  await db?.drop();
});

async function run(argv: string[], env: Record<string, string>) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(['node', 'adops', ...argv], env, stdout, stderr);
  return { code, out, err };
}

const baseEnv = () => ({
  ADOPS_BASE_URL: emu.url,
  ADOPS_API_KEY: 'demo-key',
  DATABASE_URL: db.url,
  ADOPS_SCHEMA: TEST_SCHEMA,
  REDIS_URL,
  LOG_LEVEL: 'silent',
});

async function liveCounts(): Promise<{ campaigns: number; creatives: number }> {
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM ${TEST_SCHEMA}.campaigns WHERE deleted_at IS NULL) AS campaigns,
            (SELECT count(*)::int FROM ${TEST_SCHEMA}.creatives WHERE deleted_at IS NULL) AS creatives`,
  );
  return rows[0];
}

describe('adops sync', () => {
  it('--direct runs the sync in-process and prints its counts', async () => {
    const { code, out, err } = await run(['sync', '--direct'], baseEnv());
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toBe('synced 4 campaigns and 8 creatives (0 newly deleted, 0 revived)\n');
    expect(await liveCounts()).toEqual({ campaigns: 4, creatives: 8 });
  });

  it('--direct exits 1 with the cause and writes nothing when the API keeps failing', async () => {
    emu.setFaults({ failRate: 1 });
    try {
      const { code, err } = await run(['sync', '--direct'], { ...baseEnv(), ADOPS_SYNC_ATTEMPTS: '2' });
      expect(code).toBe(1);
      expect(err).toMatch(/entity sync failed, nothing was written: GET \/v2\/campaigns.*HTTP 500/);
      expect(err).not.toContain('demo-key');
    } finally {
      emu.setFaults({});
    }
  });

  it('--direct fails with one line and writes nothing when a listing runs past its cap of items', async () => {
    // A catalogue that keeps going: every page full of new campaigns (2,000 a page, so the cap comes
    // soon); it ends after 300,000, past the cap, so a sync without one would read and write them all.
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      const url = new URL(req.url ?? '/', 'http://x');
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const size = offset >= 300_000 ? 0 : Math.max(Number(url.searchParams.get('limit') ?? 100), 2000);
      const items = Array.from({ length: size }, (_, i) => ({ campaign_id: offset + i + 1, name: 'c' }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const before = await liveCounts();
      const { code, err } = await run(['sync', '--direct'], {
        ...baseEnv(),
        ADOPS_BASE_URL: `http://127.0.0.1:${port}/v2`,
      });
      expect(err, err).toMatch(
        /^adops: entity sync failed, nothing was written: GET \/campaigns\?limit=100&offset=\d+: the listing has no last page after 200,000 items .*; its pages never run out/m,
      );
      expect(code).toBe(1);
      expect(requests).toBeLessThanOrEqual(101);
      expect(await liveCounts()).toEqual(before);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('--wait enqueues a sync, a worker runs it, and the command prints the result', async () => {
    const prefix = testPrefix();
    const connection = workerConnection({ redis: { kind: 'single', url: REDIS_URL } });
    const api: ApiClient = createApiClient({ baseUrl: emu.url, apiKey: 'demo-key', auth: 'bearer' });
    const logger = createLogger({ level: 'silent', secrets: [] });
    const worker = new Worker(
      ENTITY_QUEUE,
      () => runEntitySync({ wh: warehouseOf(db.pool, TEST_SCHEMA), api, logger }),
      { connection, prefix },
    );
    try {
      await worker.waitUntilReady();
      const { campaign_id } = await api.createCampaign({ name: 'Queued', folder_id: 1, ad_format: 'native' });
      const { code, out, err } = await run(['sync', '--wait'], { ...baseEnv(), ADOPS_QUEUE_PREFIX: prefix });
      expect(err).toBe('');
      expect(code).toBe(0);
      expect(out).toMatch(
        /^enqueued entity sync s-[0-9a-z]+\nsynced 5 campaigns and 8 creatives \(0 newly deleted, 0 revived\)\n$/,
      );
      const { rows } = await db.pool.query(
        `SELECT name FROM ${TEST_SCHEMA}.campaigns WHERE campaign_id = $1`,
        [campaign_id],
      );
      expect(rows).toEqual([{ name: 'Queued' }]);
    } finally {
      await worker.close();
      await api.close();
      await closeConnection(connection);
    }
  });

  it('without --wait only enqueues, and a second request joins the sync still waiting', async () => {
    const env = { ...baseEnv(), ADOPS_QUEUE_PREFIX: testPrefix() };
    const first = await run(['sync'], env);
    const second = await run(['sync'], env);
    expect(first.code).toBe(0);
    const id = /^enqueued entity sync (s-[0-9a-z]+)\n$/.exec(first.out)?.[1];
    expect(id).toBeDefined();
    expect(second.out).toBe(`an entity sync is already queued or running: ${id}\n`);
  });

  it('--wait gives up after --timeout when no worker takes the sync', async () => {
    const env = { ...baseEnv(), ADOPS_QUEUE_PREFIX: testPrefix() };
    const { code, err } = await run(['sync', '--wait', '--timeout', '1'], env);
    expect(code).toBe(1);
    expect(err).toMatch(/did not finish within 1 s: is an adops worker running\?/);
  });

  it('--direct stores an unreadable field as NULL, skips entities with an unreadable id, and adops status shows both', async () => {
    const api = createApiClient({ baseUrl: emu.url, apiKey: 'demo-key', auth: 'bearer' });
    const campaigns = await api.listCampaigns();
    const [first, second] = campaigns;
    if (first === undefined || second === undefined) throw new Error('the emulator has too few campaigns');
    const creatives = await api.listCreatives(second.campaign_id);
    await api.close();
    // One campaign with a tier no column can hold, one campaign and one creative whose id is garbage.
    const broken = { ...first, tier: 'top' };
    const nameless = { ...second, campaign_id: 'n/a', name: 'Ghost' };
    emu.override({
      path: '/v2/campaigns',
      status: 200,
      body: JSON.stringify({ items: [broken, second, nameless, ...campaigns.slice(2)] }),
    });
    emu.override({
      path: `/v2/campaigns/${second.campaign_id}/creatives`,
      status: 200,
      body: JSON.stringify({ items: [...creatives, { ...creatives[0], creative_id: null }] }),
    });
    const { code, out, err } = await run(['sync', '--direct'], baseEnv());
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(
      /^synced \d+ campaigns and \d+ creatives \(\d+ newly deleted, \d+ revived\); 3 fields could not be read, 2 entities with an unreadable id skipped: see adops status\n$/,
    );
    const { rows } = await db.pool.query(
      `SELECT tier, name, raw->>'tier' AS raw_tier FROM ${TEST_SCHEMA}.campaigns WHERE campaign_id = $1`,
      [first.campaign_id],
    );
    expect(rows).toEqual([{ tier: null, name: first.name, raw_tier: 'top' }]);
    const ghost = await db.pool.query(`SELECT 1 FROM ${TEST_SCHEMA}.campaigns WHERE name = 'Ghost'`);
    expect(ghost.rows).toEqual([]);

    const status = await run(['status', '--days', '2'], { ...baseEnv(), ADOPS_QUEUE_PREFIX: testPrefix() });
    expect(status.code).toBe(0);
    expect(status.out).toContain('Catalogue (adops sync):');
    expect(status.out).toContain(
      '3 fields could not be read and were stored as NULL (raw keeps them); 2 entities with an unreadable id were skipped:',
    );
    expect(status.out).toContain('    campaign tier: 1');
    expect(status.out).toContain(
      `e.g. campaign ${first.campaign_id}: field tier is "top" (string), expected an integer from -32768 to 32767`,
    );
    expect(status.out).toContain('e.g. campaign (unreadable id): field campaign_id is "n/a" (string)');
    expect(status.out).toContain('e.g. creative (unreadable id): field creative_id is null (null)');
    const json = await run(['status', '--json', '--days', '2'], {
      ...baseEnv(),
      ADOPS_QUEUE_PREFIX: testPrefix(),
    });
    expect(JSON.parse(json.out).entities.lastWritten.problems).toMatchObject({ count: 3, skipped: 2 });
  });

  it('--direct stores a campaign name with a NUL repaired instead of failing, and adops status says which', async () => {
    const api = createApiClient({ baseUrl: emu.url, apiKey: 'demo-key', auth: 'bearer' });
    const { campaign_id: id } = await api.createCampaign({
      name: 'Nul\u0000Name',
      folder_id: 2,
      ad_format: 'vast',
    });
    await api.close();
    const { code, out, err } = await run(['sync', '--direct'], baseEnv());
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/; 1 fields could not be read: see adops status\n$/);
    const { rows } = await db.pool.query(
      `SELECT name, raw->>'name' AS raw FROM ${TEST_SCHEMA}.campaigns WHERE campaign_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ name: 'NulName', raw: 'NulName' }]);

    const status = await run(['status', '--days', '2'], { ...baseEnv(), ADOPS_QUEUE_PREFIX: testPrefix() });
    expect(status.code).toBe(0);
    expect(status.out).toContain(
      '  1 text fields held NUL characters or unpaired surrogates, which Postgres cannot store: stored with the NULs removed and U+FFFD for each surrogate, in their columns and in raw:',
    );
    expect(status.out).not.toContain('stored as NULL');
    expect(status.out).toContain('    campaign name: 1');
    expect(status.out).toContain(
      `e.g. campaign ${id}: field name is "Nul\\u0000Name" (string), expected text without NUL`,
    );
  });
});
