// The switch to a new table version and a load of the old shape in flight: the switch waits for
// the load (which holds the report's evolution lock shared), so the load never commits into a
// version the switch retired after the load read it as serving. Written after the fix it covers
// (commit "A load whose definition's dimensions are a retired version's is refused..."); with the
// load's shared evolution lock taken out it fails: the swap decides to switch while the load is in
// flight, then waits only on the table to rename it.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { ensureReportTables } from '../../../src/schema/report-tables.js';
import { swapVersion } from '../../../src/evolution/evolution.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { openTestDatabase, pulled, reportBody, reportJob, type Row } from '../warehouse/fixtures/reports.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const OLD: Dimension[] = ['day', 'campaign_id'];
const NEW: Dimension[] = ['day', 'campaign_id', 'country'];
const oldJob = reportJob('swap_race', OLD);
const newJob = reportJob('swap_race', NEW);
const day = (d: string) => ({ start: d, end: d });
const rowsOf = (d: string, dims: readonly Dimension[]): Row[] =>
  [101, 102].map((id) => [dims.length === 2 ? [d, String(id)] : [d, String(id), 'US'], [4, 3, 2, 2, 1]]);

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function withClient<T>(fn: (c: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const c = await db.pool.connect();
  try {
    return await fn(c);
  } finally {
    c.release();
  }
}

/** Polls `check` until it holds (a condition of the database, never a sleep in its place). */
async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const count = async (sql: string): Promise<number> =>
  (await db.pool.query<{ n: number }>(sql)).rows[0]?.n ?? 0;

describe('a swap and a load of the old shape in flight', () => {
  it('the swap waits for the load to commit, so the load lands in a version that still serves and the swap sees its period', async () => {
    // Version 1 serves [day, campaign_id]; version 2 [day, campaign_id, country] is building and
    // covers every period version 1 holds: ready to swap.
    await withClient((c) => ensureReportTables(c, warehouseOf(db.pool, S), [oldJob]));
    let t = Date.UTC(2026, 2, 1);
    for (const d of ['2026-03-01', '2026-03-02'])
      await loadPulledPeriod(db.pool, S, pulled(oldJob, day(d), rowsOf(d, OLD), new Date(++t)));
    await withClient((c) => ensureReportTables(c, warehouseOf(db.pool, S), [newJob], { autoSwap: false }));
    for (const d of ['2026-03-01', '2026-03-02'])
      await loadPulledPeriod(db.pool, S, pulled(newJob, day(d), rowsOf(d, NEW), new Date(++t)));

    // A load of the old shape of a new period, its body held back until the test lets it go: the
    // load is in its transaction, its COPY waiting for rows, having read version 1 as its table.
    const slow = '2026-03-03';
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const body = reportBody(rowsOf(slow, OLD));
    async function* held(): AsyncGenerator<Buffer> {
      await gate;
      yield body;
    }
    const load = loadPulledPeriod(db.pool, S, {
      ...pulled(oldJob, day(slow), rowsOf(slow, OLD), new Date(++t)),
      body: held(),
    });
    load.catch(() => undefined);
    const copying = `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'COPY %report_swap_race%'`;
    await until(async () => (await count(copying)) > 0);

    // The switch starts now. It must wait for the load rather than retire version 1 under it.
    let swapDone = false;
    const swap = withClient((c) => swapVersion(c, warehouseOf(db.pool, S), oldJob)).finally(
      () => (swapDone = true),
    );
    // Whatever fails below, the load and the swap end before the database is dropped.
    onTestFinished(async () => {
      release();
      await Promise.allSettled([load, swap]);
    });
    const waiting = `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
      WHERE d.datname = current_database() AND NOT l.granted`;
    await until(async () => swapDone || (await count(waiting)) > 0);
    expect(swapDone, 'the swap went ahead while a load of the version it retires was in flight').toBe(false);
    // On the evolution lock, before it read the coverage: not on the table, after deciding to
    // switch (renaming version 1 waits for the COPY too, but too late: it has decided by then).
    expect(await count(`${waiting} AND l.locktype = 'advisory'`)).toBe(1);

    release();
    const loaded = await load;
    expect(loaded.status).toBe('loaded');
    // The load committed first, into version 1 while it served: its period is one version 2 does
    // not cover yet, so the swap, seeing it, does not switch (the new shape's pull comes first).
    expect(await swap).toBeUndefined();
    const states = await db.pool.query<{ version: number; state: string }>(
      `SELECT version, state FROM ${S}.report_versions WHERE report = 'swap_race' ORDER BY version`,
    );
    expect(states.rows).toEqual([
      { version: 1, state: 'serving' },
      { version: 2, state: 'building' },
    ]);
    expect(await count(`SELECT count(*)::int AS n FROM ${S}.report_swap_race WHERE day = '${slow}'`)).toBe(2);
  });
});
