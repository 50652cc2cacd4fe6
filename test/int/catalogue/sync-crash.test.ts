// A worker SIGKILLed in the middle of a catalogue sync: the job, taken up again by another worker,
// resumes from the pages the dead one staged instead of reading the catalogue from page one.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { enqueueEntitySync } from '../../../src/catalogue/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { expectTablesMatchApi } from './expect-tables.js';
import { createSyncHarness, type SyncHarness } from './sync-harness.js';

const CHILD = fileURLToPath(new URL('./sync-worker-child.ts', import.meta.url));
const CAMPAIGNS = 120;
const S = TEST_SCHEMA;

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Polls `probe` until it returns a value (Postgres has no event for a staged page). */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a catalogue sync whose worker is SIGKILLed', () => {
  it('resumes from its checkpoint in another worker, reading only what was not staged', async () => {
    h = await createSyncHarness({
      emulator: {
        catalogue: { campaigns: CAMPAIGNS, creativesPerCampaign: 2 },
        // Slow creative listings: the sync is well under way, not finished, when it is killed.
        faults: { latencyMs: 60, paths: ['/v2/campaigns/'] },
      },
      env: { LOG_LEVEL: 'warn' },
    });
    const harness = h;
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...harness.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    const log: string[] = [];
    child.stderr.on('data', (c: Buffer) => log.push(c.toString()));
    let jobId: string;
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('READY\n')) resolve();
        });
        void exited.then(() => reject(new Error(`worker child exited early:\n${log.join('')}`)));
      });
      ({ jobId } = await enqueueEntitySync(harness.queues.syncs));
      await until('a third of the creative listings staged', async () =>
        (await stagedListings(harness)) >= CAMPAIGNS / 3 ? true : undefined,
      );
    } finally {
      child.kill('SIGKILL');
      await exited;
    }

    // What the dead worker left: the whole campaign listing and some of the creative listings.
    const staged = await stagedListings(harness);
    const { rows } = await harness.db.pool.query(
      `SELECT count(*)::int AS pages, count(*) FILTER (WHERE last)::int AS complete
         FROM ${S}.entity_sync_pages WHERE listing = 0`,
    );
    // 120 campaigns are two pages of 100.
    expect(rows[0]).toEqual({ pages: 2, complete: 1 });
    expect(staged).toBeLessThan(CAMPAIGNS);
    harness.emulator.resetStats();

    // Another worker takes the stalled job up again and finishes it from the checkpoint.
    await harness.worker({ stall: { lockDurationMs: 2_000, stalledIntervalMs: 500 } });
    const { result } = await harness.wait(jobId);
    const requests = harness.emulator.stats().requests;
    expect(requests['GET /v2/campaigns'] ?? 0).toBe(0);
    expect(requests['GET /v2/campaigns/:id/creatives']).toBe(CAMPAIGNS - staged);
    expect(result).toMatchObject({
      campaigns: CAMPAIGNS,
      creatives: 2 * CAMPAIGNS,
      requests: CAMPAIGNS - staged,
    });
    expect(result.resumedPages).toBe(staged + 2);
    const run = await harness.db.pool.query(
      `SELECT status, tries, (SELECT count(*)::int FROM ${S}.entity_sync_pages) AS pages
         FROM ${S}.entity_sync_runs WHERE run_id = $1`,
      [jobId],
    );
    expect(run.rows[0]).toEqual({ status: 'written', tries: 2, pages: 0 });
    harness.emulator.setFaults({});
    const api = createApiClient({ baseUrl: harness.emulator.url, apiKey: 'demo-key', auth: 'bearer' });
    try {
      await expectTablesMatchApi(harness.db.pool, S, api);
    } finally {
      await api.close();
    }
  });
});

/** Creative listings the checkpoint holds complete. */
async function stagedListings(harness: SyncHarness): Promise<number> {
  const { rows } = await harness.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${S}.entity_sync_pages WHERE listing <> 0 AND last`,
  );
  return rows[0]?.n ?? 0;
}
