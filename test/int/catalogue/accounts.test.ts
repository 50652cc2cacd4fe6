// Two accounts' catalogues in one warehouse: each sync writes, soft-deletes and versions only its
// own account's rows, though the two ad servers reuse the same campaign ids.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../helpers/api-client.js';
import { createLocalGate } from '../../../src/limits/limiter.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { syncClientOptions } from '../../../src/catalogue/read.js';
import { runEntitySync } from '../../../src/catalogue/sync.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const logger = createLogger({ level: 'silent', secrets: [] });
const gate = createLocalGate();
let db: TestDatabase;
let emulators: RunningEmulator[] = [];
let apis: ApiClient[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  db.pool.on('error', () => undefined);
  // The same seed: both servers hand out the same campaign ids, as two real accounts may.
  emulators = await Promise.all(
    [0, 1].map(() =>
      startEmulator({
        seed: 9,
        cellsPerDay: 10,
        catalogue: { campaigns: 6, creativesPerCampaign: 2, zones: 5 },
      }),
    ),
  );
  apis = emulators.map((e) =>
    createApiClient({ baseUrl: e.url, apiKey: 'demo-key', auth: 'bearer', ...syncClientOptions(gate) }),
  );
});
afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
  await Promise.all(emulators.map((e) => e.close()));
  await db?.drop();
});

const sync = (account: string, api: ApiClient) =>
  runEntitySync({ wh: warehouseOf(db.pool, S), account, api, logger, gate, retry: { baseMs: 1, maxMs: 5 } });

async function counts(): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ key: string; n: number }>(
    `SELECT account || '/' || t AS key, n FROM (
       SELECT account, 'live' AS t, count(*)::int AS n FROM ${S}.campaigns WHERE deleted_at IS NULL GROUP BY account
       UNION ALL SELECT account, 'zones', count(*)::int FROM ${S}.campaign_zones GROUP BY account
       UNION ALL SELECT account, 'history', count(*)::int FROM ${S}.campaigns_history GROUP BY account) x`,
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.n]));
}

it("keeps each account's catalogue apart, though the ids are the same", async () => {
  await sync('north', apis[0]!);
  await sync('south', apis[1]!);
  const both = await counts();
  expect(both['north/live']).toBeGreaterThan(0);
  expect(both['south/live']).toBe(both['north/live']);
  expect(both['south/zones']).toBe(both['north/zones']);

  // South deletes a campaign: south's sync soft-deletes it there, north keeps its own.
  const { rows } = await db.pool.query<{ id: string }>(
    `SELECT campaign_id::text AS id FROM ${S}.campaigns WHERE account = 'south' ORDER BY 1 LIMIT 1`,
  );
  const id = Number(rows[0]!.id);
  await apis[1]!.deleteCampaign(id);
  await sync('south', apis[1]!);
  const after = await counts();
  expect(after['south/live']).toBe(both['south/live']! - 1);
  expect(after['north/live']).toBe(both['north/live']);
  expect(after['north/history']).toBe(both['north/history']);
  const { rows: states } = await db.pool.query<{ account: string; deleted: boolean }>(
    `SELECT account, deleted_at IS NOT NULL AS deleted FROM ${S}.campaigns WHERE campaign_id = $1 ORDER BY account`,
    [id],
  );
  expect(states).toEqual([
    { account: 'north', deleted: false },
    { account: 'south', deleted: true },
  ]);
});
