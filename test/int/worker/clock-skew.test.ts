// Fencing against a worker whose clock runs ahead: which response wins a period must not depend on
// any worker's wall clock. The pulls go through the worker's own pull path (runPull over pullDeps)
// against the emulator over HTTP and the real warehouse.
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { pullDeps, runPull } from '../../../src/pull/run.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, loadsOf, openTestDatabase, reportJob } from '../warehouse/fixtures/reports.js';

const S = TEST_SCHEMA;
const DAY_MS = 86_400_000;
const logger = createLogger({ level: 'silent', secrets: [] });
const report = reportJob('skew_campaign', ['day', 'campaign_id']);
const job = { report: report.name, periodStart: '2026-03-01', periodEnd: '2026-03-01' };

let db: TestDatabase;
let emulator: RunningEmulator;
const clients: ApiClient[] = [];

/** The pull path of a worker whose clock reads `skewMs` ahead of the real one. */
function workerWithClock(skewMs: number) {
  const api = createApiClient({
    baseUrl: emulator.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    attempts: 1,
    now: () => new Date(Date.now() + skewMs),
  });
  clients.push(api);
  const fetcher = { fetchReport: (q: Parameters<ApiClient['fetchReport']>[0]) => api.fetchReport(q) };
  return pullDeps(new Map([[report.name, report]]), fetcher, warehouseOf(db.pool, S));
}

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  emulator = await startEmulator({ seed: 5, cellsPerDay: 40, lateDataDays: 0 });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await emulator?.close();
  await db?.drop();
});

describe('a worker whose clock runs a day ahead', () => {
  it('does not make a later correct re-pull of the period superseded', async () => {
    const ahead = await runPull(workerWithClock(DAY_MS), job, 'skewed', logger);
    expect(ahead).toMatchObject({ ok: true, loaded: { status: 'loaded' } });
    const later = await runPull(workerWithClock(0), job, 'correct', logger);
    expect(later).toMatchObject({ ok: true, loaded: { status: 'loaded' } });
    if (!later.ok) return;
    // The later pull owns the period: its rows and totals, and no load of it was superseded.
    const { rows } = await db.pool.query<{ load_id: number }>(
      `SELECT DISTINCT load_id::int FROM ${S}.report_${report.name} WHERE period_start = $1
        UNION ALL SELECT load_id::int FROM ${S}.report_totals WHERE report = $2`,
      [job.periodStart, report.name],
    );
    expect(rows.map((r) => r.load_id)).toEqual([later.loaded.loadId, later.loaded.loadId]);
    expect((await loadsOf(db.pool, report.name)).map((l) => l.status)).toEqual(['loaded', 'loaded']);
  });
});
