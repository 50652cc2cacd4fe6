// A deployment that ran without an accounts file holds its rows under `default`; naming the same server
// `north` in an accounts file leaves them there, and a backfill then doubles the days both hold.
// `adops accounts rename default north` moves one account's rows, loads and catalogue to the new name
// in one transaction (--merge when the new name already holds rows: its own rows win), and
// `adops status` names every account that holds rows, configured or not.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLocalGate } from '../../../src/limits/limiter.js';
import { syncClientOptions } from '../../../src/catalogue/read.js';
import { runEntitySync } from '../../../src/catalogue/sync.js';
import { loadJobs, type ReportJob } from '../../../src/platform/config/jobs.js';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { createApiClient, type ApiClient } from '../../helpers/api-client.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { loadPulledPeriod, recordFailedPull, createHarness, type Harness } from '../../helpers/pipeline.js';
import { runCli } from '../../helpers/run-cli.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { pulled } from '../warehouse/fixtures/reports.js';

const S = TEST_SCHEMA;
const dir = mkdtempSync(join(tmpdir(), 'adops-accounts-rename-'));
const accountsFile = join(dir, 'accounts.yaml');
writeFileSync(accountsFile, '- { name: north, base_url: "http://127.0.0.1:1/v2", api_key_env: NORTH_KEY }\n');

const logger = createLogger({ level: 'silent', secrets: [] });
const gate = createLocalGate();
const report = loadJobs('jobs').reports.find((r) => r.name === 'daily_campaign') as ReportJob;
const day = (n: number) => addDays(localDate(new Date(), 'UTC'), -n);
let db: TestDatabase;
let emulator: RunningEmulator;
let api: ApiClient;
let env: Record<string, string>;

beforeAll(async () => {
  emulator = await startEmulator({
    seed: 9,
    cellsPerDay: 10,
    catalogue: { campaigns: 6, creativesPerCampaign: 2, zones: 5 },
  });
  api = createApiClient({
    baseUrl: emulator.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    ...syncClientOptions(gate),
  });
});
beforeEach(async () => {
  await db?.drop();
  db = await createTestDatabase();
  db.pool.on('error', () => undefined);
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: 'redis://127.0.0.1:1',
    ADOPS_SCHEMA: S,
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_ACCOUNTS_FILE: accountsFile,
    NORTH_KEY: 'north-secret-key',
    LOG_LEVEL: 'silent',
  };
});
afterAll(async () => {
  await api?.close();
  await emulator?.close();
  await db?.drop();
});

/** Loads one day of daily_campaign for `account`: campaign 7 with `impressions`. */
async function load(account: string, daysAgo: number, impressions: number, fetchedAt = new Date()) {
  const d = day(daysAgo);
  await loadPulledPeriod(
    db.pool,
    S,
    pulled(
      report,
      { start: d, end: d },
      [
        [
          [d, '7'],
          [impressions, impressions, impressions, impressions, impressions],
        ],
      ],
      fetchedAt,
      { account },
    ),
  );
}

const sync = (account: string) =>
  runEntitySync({ wh: warehouseOf(db.pool, S), account, api, logger, gate, retry: { baseMs: 1, maxMs: 5 } });

/** Rows per account of every table of the schema with an account column (partitions counted in their parent). */
async function holdings(): Promise<Record<string, Record<string, number>>> {
  const { rows: tables } = await db.pool.query<{ t: string }>(
    `SELECT c.relname AS t FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND a.attname = 'account' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY 1`,
    [S],
  );
  const out: Record<string, Record<string, number>> = {};
  for (const { t } of tables) {
    const { rows } = await db.pool.query<{ account: string; n: number }>(
      `SELECT account, count(*)::int AS n FROM ${S}.${t} GROUP BY account ORDER BY account`,
    );
    for (const r of rows) (out[r.account] ??= {})[t] = r.n;
  }
  return out;
}

/** bi_daily_campaign's impressions per day and account, as a dashboard's "All" sums them. */
async function biDays(): Promise<string[]> {
  const { rows } = await db.pool.query<{ line: string }>(
    `SELECT day::text || ' ' || account || ' ' || sum(impressions)::text AS line
       FROM ${S}.bi_daily_campaign GROUP BY day, account ORDER BY day, account`,
  );
  return rows.map((r) => r.line);
}

describe('adops accounts rename', () => {
  it('moves every row, load and catalogue entry of default to north, and status names default until then', async () => {
    await load('default', 3, 10);
    await load('default', 2, 20);
    await recordFailedPull(db.pool, S, {
      account: 'default',
      report,
      period: { start: day(1), end: day(1) },
      error: new Error('HTTP 500'),
      attempts: 3,
    });
    await sync('default');
    const before = await holdings();
    expect(Object.keys(before)).toEqual(['default']);

    // The accounts file names north only: status still says that default holds rows.
    const status = await runCli(['status', '--days', '3'], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(
      'account default holds rows but is not configured (ADOPS_ACCOUNTS_FILE): 3 loads (2 periods loaded',
    );
    expect(status.stdout).toContain('adops accounts rename default NAME');
    const json = JSON.parse((await runCli(['status', '--days', '3', '--json'], env)).stdout) as {
      unconfiguredAccounts: Array<{ account: string; loads: number }>;
    };
    expect(json.unconfiguredAccounts).toMatchObject([{ account: 'default', loads: 3 }]);

    const run = await runCli(['accounts', 'rename', 'default', 'north'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('renamed account default to north');
    expect(await holdings()).toEqual({ north: before.default });
    expect(await biDays()).toEqual([`${day(3)} north 10`, `${day(2)} north 20`]);
    const after = await runCli(['status', '--days', '3'], env);
    expect(after.stdout).not.toContain('is not configured');
    // A replay reads the moved archive: the body is north's now.
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT load_id::text AS id FROM ${S}.report_loads WHERE status = 'loaded' ORDER BY period_start LIMIT 1`,
    );
    const replay = await runCli(['replay', '--load-id', rows[0]?.id ?? '0'], env);
    expect(replay.stderr).toBe('');
    expect(replay.code).toBe(0);
  });

  it('refuses when north already holds rows unless --merge; --merge keeps north where both hold a period', async () => {
    const early = new Date(Date.now() - 3_600_000);
    await load('default', 3, 10, early);
    await load('default', 2, 20, early);
    await sync('default');
    // The accounts file came, and a backfill pulled day 2 again as north (restated), and day 1.
    await load('north', 2, 25);
    await load('north', 1, 30);
    await sync('north');
    expect(await biDays()).toEqual([
      `${day(3)} default 10`,
      `${day(2)} default 20`,
      `${day(2)} north 25`,
      `${day(1)} north 30`,
    ]);
    const before = await holdings();

    const refused = await runCli(['accounts', 'rename', 'default', 'north'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^adops: account north already holds rows \(.*report_loads: 2.*\)/);
    expect(refused.stderr).toContain('--merge');
    expect(await holdings()).toEqual(before);

    const merged = await runCli(['accounts', 'rename', 'default', 'north', '--merge'], env);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(await biDays()).toEqual([`${day(3)} north 10`, `${day(2)} north 25`, `${day(1)} north 30`]);
    const after = await holdings();
    expect(Object.keys(after)).toEqual(['north']);
    // One catalogue: the same server's campaigns once, north's rows kept.
    expect(after.north?.campaigns).toBe(before.north?.campaigns);
    expect(after.north?.campaign_zones).toBe(before.north?.campaign_zones);
    // Every load kept as history; default's load of day 2 is superseded by north's.
    expect(after.north?.report_loads).toBe(4);
    const { rows } = await db.pool.query<{ period: string; status: string; n: number }>(
      `SELECT period_start::text AS period, status, count(*)::int AS n FROM ${S}.report_loads
        GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    expect(rows).toEqual([
      { period: day(3), status: 'loaded', n: 1 },
      { period: day(2), status: 'loaded', n: 1 },
      { period: day(2), status: 'superseded', n: 1 },
      { period: day(1), status: 'loaded', n: 1 },
    ]);
    const totals = await db.pool.query<{ period: string; impressions: string }>(
      `SELECT period_start::text AS period, impressions::text FROM ${S}.report_totals ORDER BY 1`,
    );
    expect(totals.rows).toEqual([
      { period: day(3), impressions: '10' },
      { period: day(2), impressions: '25' },
      { period: day(1), impressions: '30' },
    ]);
  });

  it('refuses, in one line and changing nothing, an account that holds nothing, the same name and a bad name', async () => {
    await load('default', 2, 20);
    const before = await holdings();
    const empty = await runCli(['accounts', 'rename', 'south', 'north'], env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe(
      `adops: account south holds no rows in schema ${S}: nothing to rename (accounts holding rows: default)\n`,
    );
    const same = await runCli(['accounts', 'rename', 'default', 'default'], env);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('the same name');
    const bad = await runCli(['accounts', 'rename', 'default', 'North East'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('"North East" is not an account name');
    expect(await holdings()).toEqual(before);
  });
});

describe('a running worker and its accounts file', () => {
  let h: Harness | undefined;
  let worker: CliProcess | undefined;
  afterAll(async () => {
    await worker?.kill('SIGKILL');
    await h?.close();
  });

  it('warns, naming the file, that an edited accounts file takes a restart', async () => {
    const file = join(dir, 'worker-accounts.yaml');
    writeFileSync(file, '- { name: north, base_url: "http://127.0.0.1:1/v2", api_key_env: NORTH_KEY }\n');
    h = await createHarness({ env: { ADOPS_ACCOUNTS_FILE: file, NORTH_KEY: 'north-secret-key' } });
    worker = spawnCli(['worker', '--concurrency', '1'], { ...h.env, LOG_LEVEL: 'info' });
    await worker.waitFor(/"msg":"worker started"/);
    writeFileSync(
      file,
      '- { name: north, base_url: "http://127.0.0.1:1/v2", api_key_env: NORTH_KEY }\n' +
        '- { name: south, base_url: "http://127.0.0.1:1/v2", api_key_env: NORTH_KEY }\n',
    );
    const line = await worker.waitFor(/ADOPS_ACCOUNTS_FILE changed[^\n]*/, 20_000);
    expect(line).toContain(file);
    expect(line).toContain('restart');
    expect(worker.stderr() + worker.stdout()).not.toContain('north-secret-key');
  }, 60_000);
});
