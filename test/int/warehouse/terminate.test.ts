import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ReportRow } from '../../../src/flatten/types.js';
import { loadParsedPeriod, loadPulledPeriod } from '../../helpers/pipeline.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import {
  asText,
  createTables,
  openTestDatabase,
  periodRows,
  pulled,
  reportJob,
  type Row,
} from './fixtures/reports.js';

const report = reportJob('wh_terminate', ['day', 'campaign_id']);
const period = { start: '2026-05-02', end: '2026-05-02' };
const previous: Row[] = [
  [
    ['2026-05-02', '1'],
    [1, 2, 3, 4, 5],
  ],
];
const zero = {
  ad_requests: 0,
  filled_impressions: 0,
  impressions: 0,
  measurable_impressions: 0,
  viewable_impressions: 0,
};
let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  await loadPulledPeriod(
    db.pool,
    TEST_SCHEMA,
    pulled(report, period, previous, new Date('2026-05-03T03:00:00Z')),
  );
});
afterAll(async () => {
  await db?.drop();
});

/** The backend running a COPY in this database, once it has written `tuples` rows. */
async function copyingBackend(tuples: number): Promise<number> {
  for (;;) {
    const { rows } = await db.pool.query<{ pid: number; n: string }>(
      `SELECT pid, tuples_processed::text AS n FROM pg_stat_progress_copy WHERE datname = current_database()`,
    );
    const row = rows[0];
    if (row !== undefined && Number(row.n) >= tuples) return row.pid;
    await new Promise((r) => setTimeout(r, 10));
  }
}

it('losing the Postgres backend mid-COPY rejects the load without crashing the process and keeps the old rows', async () => {
  async function* endless(): AsyncGenerator<ReportRow> {
    for (let i = 1; ; i++) yield { dims: ['2026-05-02', String(1_000 + i)], counters: [i, i, i, i, i] };
  }
  const load = loadParsedPeriod(db.pool, TEST_SCHEMA, {
    report,
    period,
    rows: endless(),
    summary: () => ({ totals: zero, reconciliation: { ok: true, differences: [] } }),
    fetchedAt: new Date(),
    fetchToken: Date.now(),
    attempts: 1,
    bytes: 0,
    fetchMs: 0,
  });
  const settled = load.then(
    () => undefined,
    (error: unknown) => error,
  );
  const pid = await copyingBackend(5_000);
  await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
  const error = (await settled) as Error;
  expect(error).toBeInstanceOf(Error);
  // Postgres' "terminating connection", or the reset our COPY write meets first: which one is a race.
  expect(error.message).toMatch(/terminat|ECONNRESET|Connection terminated/i);
  expect(await periodRows(db.pool, report, period)).toEqual(asText(previous));
  // The pool dropped the dead client; the next load works.
  const next: Row[] = [
    [
      ['2026-05-02', '2'],
      [6, 6, 6, 6, 6],
    ],
  ];
  expect(
    (await loadPulledPeriod(db.pool, TEST_SCHEMA, pulled(report, period, next, new Date()))).status,
  ).toBe('loaded');
  expect(await periodRows(db.pool, report, period)).toEqual(asText(next));
});
