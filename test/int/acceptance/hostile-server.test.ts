// Issue 15's acceptance: the whole product against a server that reads the spec differently from
// our emulator's defaults and misbehaves (the emulator's hostile profile: 25% 5xx, some as HTML
// 502 pages, 429s with Retry-After: 1 (2% here), 3% dropped connections, string-encoded values, PHP
// bracket parameters, x-api-key only). Real processes: migrate, two workers on one host with the
// default metrics port, a 14-day backfill of 3 reports, a catalogue sync of 250 campaigns whose
// largest creative listing takes 2 pages, a delete, and a second sync.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../helpers/api-client.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { PROFILES, startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { QUEUE_ENV } from '../../helpers/services.js';
import { days, fetchTruth, verify } from '../../helpers/reliability/truth.js';
import { expectTablesMatchApi, typedTables } from '../catalogue/expect-tables.js';

const REPORTS = ['daily_campaign', 'daily_creative', 'daily_geo_device'];
const PERIODS = days('2025-05-01', '2025-05-14');
const DATA = { seed: 15, cellsPerDay: 300, lateDataDays: 0, catalogue: { campaigns: 250 } };
/**
 * The hostile profile's faults, but 2% 429s, not 5%: every 429 holds all requests for its 1 s
 * Retry-After, and 5% spent 35 s of this test in those pauses; the seeded run still meets 14.
 */
const HOSTILE_FAULTS = { ...PROFILES.hostile.faults, rateLimitRate: 0.02, seed: 9 };
/** Creative types a campaign of each ad format allows (the spec's table). */
const AD_TYPE: Record<string, string> = { display: 'image', native: 'json', vast: 'video', redirect: 'url' };

let db: TestDatabase;
let jobsDir: string;
let hostile: RunningEmulator;
let faithful: RunningEmulator;
let api: ApiClient;
let env: Record<string, string>;
const workers: CliProcess[] = [];

/** Runs one `adops` command to its end; returns its exit code and output. */
async function adops(...args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const run = spawnCli(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** Runs `work` against the hostile emulator with its faults off (test set-up, not the system under test). */
async function withoutFaults<T>(work: () => Promise<T>): Promise<T> {
  hostile.setFaults({});
  try {
    return await work();
  } finally {
    hostile.setFaults(HOSTILE_FAULTS);
  }
}

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  jobsDir = await mkdtemp(join(tmpdir(), 'adops-hostile-jobs-'));
  for (const name of REPORTS) await copyFile(join('jobs', `${name}.yaml`), join(jobsDir, `${name}.yaml`));
  hostile = await startEmulator({ ...DATA, profile: 'hostile', faults: HOSTILE_FAULTS });
  faithful = await startEmulator(DATA);
  // The test's own reads and writes speak the hostile server's one auth form.
  api = createApiClient({ baseUrl: hostile.url, apiKey: 'demo-key', auth: 'x-api-key' });
  env = {
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_BASE_URL: hostile.url,
    ADOPS_API_KEY: 'demo-key',
    ADOPS_AUTH: 'x-api-key',
    ADOPS_REPORT_PARAMS: 'brackets',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_JOBS_DIR: jobsDir,
    ADOPS_RATE_LIMIT: '200',
    ADOPS_HTTP_MAX_BACKOFF_MS: '200',
    LOG_LEVEL: 'info',
    ...QUEUE_ENV,
  };
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGTERM')));
  await api?.close();
  await hostile?.close();
  await faithful?.close();
  await db?.drop();
  if (jobsDir !== undefined) await rm(jobsDir, { recursive: true, force: true });
});

describe('against a hostile server that meets the spec', () => {
  it('backfills exactly, syncs the catalogue twice with a delete between, and agrees with a faithful server', async () => {
    // The largest creative listing takes two pages of the default 100.
    const [big] = await withoutFaults(() => api.listCampaigns({ limit: 1 }));
    const bigId = Number(big?.campaign_id);
    await withoutFaults(async () => {
      for (let i = 0; i < 101; i++)
        await api.createCreative(bigId, {
          name: `extra ${i}`,
          ad_type: AD_TYPE[String(big?.ad_format)] ?? 'image',
        });
    });

    expect((await adops('migrate')).code).toBe(0);
    for (let i = 0; i < 2; i++) {
      const worker = spawnCli(['worker', '--concurrency', '4'], env);
      workers.push(worker);
      await worker.waitFor(/worker started/, 60_000);
    }

    const backfill = await adops('backfill', '--all', '--from', '2025-05-01', '--to', '2025-05-14', '--wait');
    expect(backfill.code, backfill.stderr.slice(-2000)).toBe(0);
    const reports = loadJobs(jobsDir).reports;
    const truth = await fetchTruth(faithful.url, 'demo-key', reports, PERIODS);
    const verdict = await verify(db.pool, TEST_SCHEMA, reports, truth);
    expect(verdict.problems).toEqual([]);
    expect(verdict).toMatchObject({ exact: 42, total: 42, duplicates: 0 });

    const first = await adops('sync', '--wait');
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    expect(first.stdout).toMatch(/synced 250 campaigns and \d+ creatives/);

    const [doomed] = await withoutFaults(() => api.listCampaigns({ limit: 1, offset: 7 }));
    const doomedId = Number(doomed?.campaign_id);
    await withoutFaults(() => api.deleteCampaign(doomedId));
    const second = await adops('sync', '--wait');
    expect(second.code, second.stderr.slice(-2000)).toBe(0);
    expect(second.stdout).toMatch(
      /synced 249 campaigns and \d+ creatives \([1-9]\d* newly deleted, 0 revived\)/,
    );

    // The faults really happened: every kind the profile injects was met, on reports and catalogue.
    const faults = hostile.stats().faults;
    expect(faults.fail ?? 0).toBeGreaterThan(50);
    expect(faults.rate_limit ?? 0).toBeGreaterThan(5);
    expect((faults.drop ?? 0) + (faults.drop_mid_body ?? 0)).toBeGreaterThan(3);

    // The hostile sync's tables equal a sync from a faithful, fault-free server of the same
    // catalogue, and that one equals the API's listing field by field, the deleted one soft-deleted.
    const hostileTables = await typedTables(db.pool, TEST_SCHEMA);
    hostile.setFaults({});
    hostile.setQuirks({});
    const again = await adops('sync', '--wait');
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(await typedTables(db.pool, TEST_SCHEMA)).toEqual(hostileTables);
    const listing = await expectTablesMatchApi(db.pool, TEST_SCHEMA, api);
    expect(listing.creatives.filter((c) => Number(c.campaign_id) === bigId).length).toBeGreaterThan(100);
    const { rows } = await db.pool.query<{ id: number }>(
      `SELECT campaign_id::int AS id FROM ${TEST_SCHEMA}.campaigns WHERE deleted_at IS NOT NULL`,
    );
    expect(rows).toEqual([{ id: doomedId }]);
  }, 300_000);
});
