// A body loaded while it streams in: the same rows as the body loaded whole, archived as it passes,
// and a failure part way through (a bad row, a cut connection) leaves the period's previous rows
// and keeps the body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { LoadError } from '../../../src/pull/run.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { readArchivedBody } from '../../../src/pull/archive.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createPool, warehouseOf } from '../../../src/platform/pg/handle.js';
import {
  createTables,
  loadsOf,
  openTestDatabase,
  periodRows,
  pulled,
  reportBody,
  reportJob,
  type Row,
} from './fixtures/reports.js';

const S = TEST_SCHEMA;
const report = reportJob('wh_streamed', ['day', 'campaign_id']);
const period = { start: '2026-03-01', end: '2026-03-01' };
const API_KEY = 'sk-streamed-secret-0123456789';
let db: TestDatabase;

/** `n` rows of the period, counters scaled by `k` so two loads differ. */
function rowsOf(n: number, k: number): Row[] {
  return Array.from({ length: n }, (_, i) => [
    ['2026-03-01', String(1_000_000 + i)],
    [i * k + 5, i * k + 4, i * k + 3, i * k + 2, i * k + 1],
  ]);
}

/** `body` as a response's chunks of varying sizes; `fail` throws at that byte offset. */
async function* chunksOf(body: Buffer, fail?: { at: number; error: Error }): AsyncGenerator<Buffer> {
  let from = 0;
  for (let i = 0; from < body.length; i++) {
    const size = [1, 7, 4096, 65_536, 300_000][i % 5] as number;
    const to = Math.min(body.length, from + size);
    if (fail !== undefined && to > fail.at) {
      if (fail.at > from) yield body.subarray(from, fail.at);
      throw fail.error;
    }
    yield body.subarray(from, to);
    from = to;
  }
}

let fetchToken = 1_000;
function streamedPull(body: Buffer, fail?: { at: number; error: Error }) {
  return { ...pulled(report, period, [], new Date()), body: chunksOf(body, fail), fetchToken: ++fetchToken };
}

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
});
afterAll(async () => {
  await db?.drop();
});

describe('a streamed load', () => {
  it('loads the same rows as the body held whole, and archives the body in parts', async () => {
    const rows = rowsOf(30_000, 3);
    const body = reportBody(rows);
    const whole = await loadPulledPeriod(db.pool, S, {
      ...pulled(report, period, rows, new Date()),
      fetchToken: ++fetchToken,
    });
    const expected = await periodRows(db.pool, report, period);
    const outcome = await loadPulledPeriod(db.pool, S, streamedPull(body));
    expect(outcome).toMatchObject({ status: 'loaded', rows: 30_000, reconciled: true });
    expect(outcome.loadId).toBeGreaterThan(whole.loadId);
    expect(await periodRows(db.pool, report, period)).toEqual(expected);
    const { rows: raw } = await db.pool.query<{ spool_id: string | null; parts: string; body_bytes: string }>(
      `SELECT r.spool_id, r.body_bytes, (SELECT count(*) FROM "${S}".report_raw_parts p WHERE p.spool_id = r.spool_id) AS parts
         FROM "${S}".report_raw r WHERE load_id = $1`,
      [outcome.loadId],
    );
    expect(raw[0]?.spool_id).not.toBeNull();
    expect(Number(raw[0]?.parts)).toBeGreaterThan(0);
    expect(Number(raw[0]?.body_bytes)).toBe(body.length);
    expect((await readArchivedBody(warehouseOf(db.pool, S), outcome.loadId))?.equals(body)).toBe(true);
    const { rows: audit } = await db.pool.query<{ response_bytes: string }>(
      `SELECT response_bytes FROM "${S}".report_loads WHERE load_id = $1`,
      [outcome.loadId],
    );
    expect(Number(audit[0]?.response_bytes)).toBe(body.length);
  });

  it('that meets a bad row part way leaves the previous rows, and keeps the whole body', async () => {
    const before = await periodRows(db.pool, report, period);
    const good = reportBody(rowsOf(30_000, 7)).toString('latin1');
    // A counter that is not a number, two thirds of the way in.
    const at = good.indexOf('"impressions":', Math.floor(good.length * 0.66));
    const body = Buffer.from(
      `${good.slice(0, at)}"impressions":"lots"${good.slice(good.indexOf(',', at))}`,
      'latin1',
    );
    const error = await loadPulledPeriod(db.pool, S, streamedPull(body)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportFormatError);
    expect(await periodRows(db.pool, report, period)).toEqual(before);
    const failed = (await loadsOf(db.pool, report.name)).at(-1)!;
    expect(failed.status).toBe('failed');
    expect((await readArchivedBody(warehouseOf(db.pool, S), Number(failed.load_id)))?.equals(body)).toBe(
      true,
    );
  });

  it('cut off part way (a reset connection) leaves the previous rows, and keeps what came', async () => {
    const before = await periodRows(db.pool, report, period);
    const body = reportBody(rowsOf(30_000, 11));
    const cut = Math.floor(body.length / 2);
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const error = await loadPulledPeriod(db.pool, S, streamedPull(body, { at: cut, error: reset })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LoadError);
    expect((error as Error).message).toMatch(/previous rows are unchanged/);
    expect(await periodRows(db.pool, report, period)).toEqual(before);
    const failed = (await loadsOf(db.pool, report.name)).at(-1)!;
    expect(failed).toMatchObject({ status: 'failed' });
    expect(String(failed.error)).toMatch(/socket hang up/);
    expect(
      (await readArchivedBody(warehouseOf(db.pool, S), Number(failed.load_id)))?.equals(
        body.subarray(0, cut),
      ),
    ).toBe(true);
  });

  it('whose archive cannot be written part way fails, and leaves the previous rows', async () => {
    const before = await periodRows(db.pool, report, period);
    // Big enough that parts are written while the body streams (a part is 1 MB of gzip).
    const body = reportBody(rowsOf(200_000, 19));
    await db.pool.query(
      `CREATE FUNCTION "${S}".refuse_part() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN RAISE EXCEPTION 'archive refused this part'; END $$;
       CREATE TRIGGER refuse_part BEFORE INSERT ON "${S}".report_raw_parts
         FOR EACH ROW EXECUTE FUNCTION "${S}".refuse_part();`,
    );
    try {
      const error = await loadPulledPeriod(db.pool, S, streamedPull(body)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LoadError);
      expect((error as Error).message).toMatch(/archive refused this part/);
    } finally {
      await db.pool.query(`DROP FUNCTION "${S}".refuse_part() CASCADE`);
    }
    expect(await periodRows(db.pool, report, period)).toEqual(before);
    const failed = (await loadsOf(db.pool, report.name)).at(-1)!;
    expect(failed).toMatchObject({ status: 'failed' });
    expect(String(failed.error)).toMatch(/archive refused this part/);
  });

  it('redacts an echoed API key even when a chunk boundary splits it', async () => {
    const rows = rowsOf(5_000, 2);
    const text = reportBody(rows).toString('utf8');
    // A server that echoes the key in a field the parser skips; 4096 + 7 + 1 puts a boundary inside it.
    const body = Buffer.from(`{"echo":"${API_KEY}",${text.slice(1)}`);
    const outcome = await loadPulledPeriod(db.pool, S, streamedPull(body), { secrets: [API_KEY] });
    expect(outcome).toMatchObject({ status: 'loaded', rows: 5_000 });
    const archived = (await readArchivedBody(warehouseOf(db.pool, S), outcome.loadId))!.toString('utf8');
    expect(archived).not.toContain(API_KEY);
    expect(archived).toContain('[REDACTED]');
    const { rows: raw } = await db.pool.query<{ body_sha256: string; received_sha256: string }>(
      `SELECT body_sha256, received_sha256 FROM "${S}".report_raw WHERE load_id = $1`,
      [outcome.loadId],
    );
    expect(raw[0]?.body_sha256).not.toBe(raw[0]?.received_sha256);
  });
});

describe('on a pipelined pool, as every command opens it', () => {
  it('loads a small period inline, and streams a big one through COPY on a connection of its own', async () => {
    const pool = createPool({ databaseUrl: db.url }, { max: 2 });
    try {
      expect(pool.options.pipeline).toBe(true);
      const small = await loadPulledPeriod(pool, S, {
        ...pulled(report, period, rowsOf(50, 13), new Date()),
        fetchToken: ++fetchToken,
      });
      expect(small).toMatchObject({ status: 'loaded', rows: 50, reconciled: true });
      expect(await periodRows(db.pool, report, period)).toHaveLength(50);
      const big = await loadPulledPeriod(pool, S, streamedPull(reportBody(rowsOf(30_000, 17))));
      expect(big).toMatchObject({ status: 'loaded', rows: 30_000, reconciled: true });
      expect(await periodRows(db.pool, report, period)).toHaveLength(30_000);
      // pg refuses COPY on a pipelined connection: the pool's one connection never ran it.
      expect(pool.totalCount).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
