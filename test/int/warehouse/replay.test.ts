import type { Pool } from 'pg';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { main } from '../../../src/cli/main.js';
import { startEmulator } from '../../../src/emulator/index.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { TerminalError } from '../../../src/platform/retry/errors.js';
import { takeFetchToken } from '../../../src/pull/load.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { pruneRaw } from '../../../src/pull/archive.js';
import { replayLoad as replay, type PullOptions } from '../../../src/pull/run.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import {
  createTables,
  loadsOf,
  openTestDatabase,
  periodRows,
  pulled,
  reportJob,
} from './fixtures/reports.js';

const S = TEST_SCHEMA;
const report = reportJob('wh_replay', ['day', 'campaign_id', 'country', 'device']);
const period = { start: '2026-01-05', end: '2026-01-05' };
let db: TestDatabase;
let originalLoad: number;
let originalRows: string[][];

/** replayLoad over the test database's pool and schema. */
function replayLoad(
  pool: Pool,
  schema: string,
  reports: ReportJob[],
  loadId: number,
  opts: PullOptions = {},
) {
  return replay(warehouseOf(pool, schema), reports, loadId, opts);
}

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  // A real pull over HTTP from the emulator, which is then stopped for good.
  const emulator = await startEmulator({
    seed: 7,
    cellsPerDay: 300,
    now: () => new Date('2026-02-01T00:00:00Z'),
  });
  const api = createApiClient({ baseUrl: emulator.url, apiKey: 'demo-key', auth: 'bearer', attempts: 1 });
  try {
    const raw = await api.fetchReport({ dimensions: report.dimensions, period });
    const outcome = await loadPulledPeriod(db.pool, S, {
      report,
      period,
      body: await raw.body.bytes(),
      fetchedAt: raw.fetchedAt,
      fetchToken: await takeFetchToken({ pool: db.pool, schema: S }),
      attempts: raw.attempts,
      fetchMs: raw.fetchMs,
    });
    originalLoad = outcome.loadId;
  } finally {
    await api.close();
    await emulator.close();
  }
  originalRows = await periodRows(db.pool, report, period);
});
afterAll(async () => {
  await db?.drop();
});

describe('replay', () => {
  it('reproduces the same rows as the original load from the archive alone (the emulator stopped)', async () => {
    expect(originalRows.length).toBeGreaterThan(10);
    const outcome = await replayLoad(db.pool, S, [report], originalLoad);
    expect(outcome).toMatchObject({ status: 'loaded', rows: originalRows.length, reconciled: true });
    expect(outcome.loadId).not.toBe(originalLoad);
    expect(await periodRows(db.pool, report, period)).toEqual(originalRows);
    const last = (await loadsOf(db.pool, report.name)).at(-1)!;
    expect(last).toMatchObject({ replay_of: originalLoad, previous_load_id: originalLoad });
    // Same body, same parser: every total unchanged.
    expect(
      Object.values(last.restatement as Record<string, { delta: number }>).every((c) => c.delta === 0),
    ).toBe(true);
  });

  it('re-flattens a body the old parser rejected, once the parser is fixed', async () => {
    const p = { start: '2026-01-06', end: '2026-01-06' };
    // Suppose the API wraps the report in {"data": ...}: today's parser refuses it, the body is kept.
    const real = pulled(
      report,
      p,
      [
        [
          ['2026-01-06', '42', 'DE', 'mobile'],
          [9, 8, 7, 6, 5],
        ],
      ],
      new Date('2026-02-01T00:00:00Z'),
    );
    const wrapped = Buffer.from(`{"data":${real.body.toString('utf8')}}`);
    await expect(loadPulledPeriod(db.pool, S, { ...real, body: wrapped })).rejects.toThrow(/items/);
    const failed = (await loadsOf(db.pool, report.name)).at(-1)!;
    expect(failed).toMatchObject({ status: 'failed', raw_kept: true });

    const fixedParser = (body: Buffer, dims: Parameters<typeof parseReport>[1]) =>
      parseReport(JSON.stringify((JSON.parse(body.toString('utf8')) as { data: unknown }).data), dims);
    const outcome = await replayLoad(db.pool, S, [report], failed.load_id as number, { parse: fixedParser });
    expect(outcome).toMatchObject({ status: 'loaded', rows: 1 });
    expect(await periodRows(db.pool, report, p)).toEqual([
      ['2026-01-06', '42', 'DE', 'mobile', '9', '8', '7', '6', '5'],
    ]);
  });

  it('of a body older than the loaded one is recorded as superseded and changes nothing', async () => {
    const newer = pulled(
      report,
      period,
      [
        [
          ['2026-01-05', '1', 'FR', 'tv'],
          [1, 1, 1, 1, 1],
        ],
      ],
      new Date(),
    );
    await loadPulledPeriod(db.pool, S, newer);
    const outcome = await replayLoad(db.pool, S, [report], originalLoad);
    expect(outcome.status).toBe('superseded');
    expect(await periodRows(db.pool, report, period)).toEqual([
      ['2026-01-05', '1', 'FR', 'tv', '1', '1', '1', '1', '1'],
    ]);
  });

  it('explains what to do when the load, its definition or its body is not available', async () => {
    await expect(replayLoad(db.pool, S, [report], 999_999)).rejects.toThrow(/load 999999 is not in/);
    await expect(replayLoad(db.pool, S, [], originalLoad)).rejects.toThrow(/no job definition/);
    const changed = reportJob('wh_replay', ['day', 'campaign_id']);
    await expect(replayLoad(db.pool, S, [changed], originalLoad)).rejects.toThrow(
      /re-pull the period instead/,
    );
    await db.pool.query(
      `UPDATE ${S}.report_raw SET archived_at = now() - interval '31 days' WHERE load_id = $1`,
      [originalLoad],
    );
    expect(await pruneRaw(warehouseOf(db.pool, S), 30)).toBe(1);
    const gone = replayLoad(db.pool, S, [report], originalLoad);
    await expect(gone).rejects.toBeInstanceOf(TerminalError);
    await expect(gone).rejects.toThrow(/adops backfill --report wh_replay --from 2026-01-05 --to 2026-01-05/);
  });
});

describe('adops replay', () => {
  function run(args: string[], jobsDir: string) {
    const out = new PassThrough();
    const err = new PassThrough();
    let stdout = '';
    let stderr = '';
    out.on('data', (d: Buffer) => (stdout += d.toString()));
    err.on('data', (d: Buffer) => (stderr += d.toString()));
    const env = { DATABASE_URL: db.url, ADOPS_SCHEMA: S, ADOPS_JOBS_DIR: jobsDir, LOG_LEVEL: 'silent' };
    return main(['node', 'adops', 'replay', ...args], env, out, err).then((code) => ({
      code,
      stdout,
      stderr,
    }));
  }

  it('replays a kept load and prints what it did; refuses a missing one with exit 1 and bad usage with 2', async () => {
    const jobsDir = mkdtempSync(join(tmpdir(), 'adops-jobs-'));
    writeFileSync(
      join(jobsDir, 'wh_replay.yaml'),
      'name: wh_replay\ndimensions: [day, campaign_id, country, device]\nperiod: day\nlookback_days: 3\n',
    );
    const loadId = (await loadsOf(db.pool, report.name)).filter((l) => l.status === 'loaded').at(-1)!
      .load_id as number;
    const ok = await run(['--load-id', String(loadId)], jobsDir);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toMatch(new RegExp(`^load ${loadId} replayed as load \\d+: 1 rows, reconciled\\n$`));
    const missing = await run(['--load-id', '424242'], jobsDir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('load 424242 is not in');
    expect((await run(['--load-id', 'abc'], jobsDir)).code).toBe(2);
  });
});
