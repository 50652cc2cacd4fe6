// Large report bodies in a worker process: the body cap is ADOPS_MAX_BODY_MB, and memory goes back
// to where it was once the pulls are loaded (nothing keeps a body after its load).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, openTestDatabase, reportJob } from '../warehouse/fixtures/reports.js';

const MB = 1_000_000;
const dimensions: Dimension[] = ['day', 'campaign_id', 'creative_id', 'zone_id', 'country', 'device'];
const report = reportJob('big_bodies', dimensions);
const day = '2026-03-01';

let db: TestDatabase;
let emulator: RunningEmulator;

interface Memory {
  heap: number;
  buffers: number;
  rss: number;
}
interface ChildReport {
  baseline: Memory;
  after: Memory;
  peakRss: number;
  outcomes: Array<{ ok: boolean; status?: string; rows?: number; bytes?: number; error?: string }>;
}

/** Runs the worker child for `rounds` pulls with `env` on top of the test's settings. */
async function bigPulls(rounds: number, env: Record<string, string> = {}): Promise<ChildReport> {
  const script = fileURLToPath(new URL('./fixtures/big-pulls.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', script, report.name, dimensions.join(','), day, String(rounds)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: db.url,
        ADOPS_SCHEMA: TEST_SCHEMA,
        ADOPS_BASE_URL: emulator.url,
        ADOPS_API_KEY: 'demo-key',
        ADOPS_HTTP_ATTEMPTS: '1',
        // Identity: the body arrives at its full size, as the cap counts it.
        ADOPS_HTTP_COMPRESSION: 'none',
        ...env,
      },
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code, err).toBe(0);
  return JSON.parse(out) as ChildReport;
}

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  // About 19 MB of JSON per pull of the day with these dimensions.
  emulator = await startEmulator({ seed: 9, cellsPerDay: 150_000, lateDataDays: 0 });
});
afterAll(async () => {
  await emulator?.close();
  await db?.drop();
});

describe('a worker pulling a large report body', () => {
  it('keeps no body after its loads: memory after a GC is back near where it started', async () => {
    // Read whole before it is loaded (under ADOPS_STREAM_BODY_MB), to test that nothing keeps it.
    const r = await bigPulls(3, { ADOPS_STREAM_BODY_MB: '500' });
    expect(r.outcomes.map((o) => o.status)).toEqual(['loaded', 'loaded', 'loaded']);
    const bytes = r.outcomes[0]?.bytes ?? 0;
    expect(bytes).toBeGreaterThan(15 * MB);
    // One body kept alive would be `bytes` more; allow a tenth of one for caches and pools.
    const grown = r.after.heap + r.after.buffers - (r.baseline.heap + r.baseline.buffers);
    expect(grown, JSON.stringify(r)).toBeLessThan(bytes / 10);
  });

  it('fails a body over ADOPS_MAX_BODY_MB with an error naming the setting, held or streamed', async () => {
    for (const stream of ['500', '2']) {
      const r = await bigPulls(1, { ADOPS_MAX_BODY_MB: '10', ADOPS_STREAM_BODY_MB: stream });
      expect(r.outcomes).toHaveLength(1);
      expect(r.outcomes[0]).toMatchObject({ ok: false });
      expect(r.outcomes[0]?.error).toMatch(/ADOPS_MAX_BODY_MB=10/);
    }
  });

  it('loads a body past ADOPS_STREAM_BODY_MB as it streams in: the rows of the body, archived in parts', async () => {
    for (const compression of ['none', 'gzip']) {
      const r = await bigPulls(1, { ADOPS_STREAM_BODY_MB: '2', ADOPS_HTTP_COMPRESSION: compression });
      expect(r.outcomes[0], JSON.stringify(r)).toMatchObject({ ok: true, status: 'loaded' });
      const { rows } = await db.pool.query<{ n: string; bytes: string; spool: string | null }>(
        `SELECT (SELECT count(*) FROM "${TEST_SCHEMA}".report_big_bodies WHERE period_start = $1) AS n,
                l.response_bytes AS bytes, r.spool_id AS spool
           FROM "${TEST_SCHEMA}".report_loads l JOIN "${TEST_SCHEMA}".report_raw r USING (load_id)
          WHERE l.report = 'big_bodies' ORDER BY l.load_id DESC LIMIT 1`,
        [day],
      );
      // The emulator's day, whole: as many rows as the pull reports, from a body of over 15 MB.
      expect(Number(rows[0]?.n)).toBe(r.outcomes[0]?.rows);
      expect(Number(rows[0]?.bytes)).toBeGreaterThan(15 * MB);
      expect(rows[0]?.spool).not.toBeNull();
    }
  });
});
