// Text dimension values far beyond what a btree entry holds (about 2.7 KB): 10 KB landing URLs,
// served by the emulator over HTTP and pulled through the worker's pull path, by both of the
// loader's ways of writing rows (inside the last statement, and COPY for a body over 1 MB).
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { pullDeps, runPull } from '../../../src/pull/run.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import {
  asText,
  createTables,
  openTestDatabase,
  periodRows,
  reportBody,
  reportJob,
  type Row,
} from './fixtures/reports.js';

const S = TEST_SCHEMA;
const logger = createLogger({ level: 'silent', secrets: [] });
const report = reportJob('wh_landing', ['day', 'landing_url', 'country']);

let db: TestDatabase;
let emulator: RunningEmulator;
let api: ApiClient;

/**
 * `n` rows of `day` whose 10 KB landing URLs differ only in their last characters. The URLs are
 * random hex: Postgres compresses a long index entry first, and a repetitive one would fit.
 */
function longRows(day: string, n: number, salt: number): Row[] {
  const stem = `https://shop.example.com/landing?ref=${randomBytes(5_000).toString('hex')}&n=`;
  return Array.from({ length: n }, (_, i) => [
    [day, `${stem}${i}`, i % 2 === 0 ? 'DE' : 'FR'],
    [i + salt, i, i, i, i],
  ]);
}

/** One pull of `day` through the worker's pull path, the emulator answering `rows`. */
async function pullServing(day: string, rows: readonly Row[], job = report) {
  emulator.override({
    path: '/v2/reports',
    status: 200,
    body: reportBody(rows),
    headers: { 'content-type': 'application/json' },
  });
  const deps = pullDeps(
    new Map([[job.name, job]]),
    { fetchReport: (q) => api.fetchReport(q) },
    warehouseOf(db.pool, S),
  );
  return runPull(deps, { report: job.name, periodStart: day, periodEnd: day }, undefined, logger);
}

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  emulator = await startEmulator({ seed: 1, cellsPerDay: 10, lateDataDays: 0 });
  api = createApiClient({ baseUrl: emulator.url, apiKey: 'demo-key', auth: 'bearer', attempts: 1 });
});
afterAll(async () => {
  await api?.close();
  await emulator?.close();
  await db?.drop();
});

describe.each([
  { path: 'rows inside the last statement', day: '2026-04-01', n: 20 },
  { path: 'rows by COPY', day: '2026-04-02', n: 150 },
])('10 KB landing URLs, $path,', ({ day, n }) => {
  it('load exactly, and a re-pull replaces them without duplicates', async () => {
    const period = { start: day, end: day };
    const first = longRows(day, n, 1);
    const out1 = await pullServing(day, first);
    expect(out1).toMatchObject({ ok: true, loaded: { status: 'loaded', rows: n } });
    expect(await periodRows(db.pool, report, period)).toEqual(asText(first));

    const second = longRows(day, n, 100);
    const out2 = await pullServing(day, second);
    expect(out2).toMatchObject({ ok: true, loaded: { status: 'loaded', rows: n } });
    expect(await periodRows(db.pool, report, period)).toEqual(asText(second));
  });
});

describe('the unique index over 10 KB values', () => {
  it('still refuses a second copy of a row, and tells values apart by their last character', async () => {
    const url = `https://shop.example.com/?q=${randomBytes(5_000).toString('hex')}`;
    const insert = (value: string) =>
      db.pool.query(
        `INSERT INTO ${S}.report_wh_landing (period_start, period_end, day, landing_url, country,
           ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions, load_id)
         VALUES ('2026-04-09', '2026-04-09', '2026-04-09', $1, 'DE', 0, 0, 0, 0, 0, 1)`,
        [value],
      );
    await insert(`${url}a`);
    await insert(`${url}b`);
    await expect(insert(`${url}a`)).rejects.toMatchObject({ code: '23505' });
  });
});
