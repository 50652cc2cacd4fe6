// What every reliability test file shares: one emulator with a canary key, the ground truth of the
// suite's periods, a fresh database and BullMQ prefix per case, and the final secrets scan.
import type { Pool } from 'pg';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../../src/emulator/index.js';
import type { JobSet, ReportJob } from '../../../src/platform/config/jobs.js';
import { qualified } from '../../../src/platform/pg/handle.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../db.js';
import { REDIS_URL, testPrefix } from '../redis.js';
import { canaryKey, suiteEnv, suiteReports } from '../pipeline.js';
import { scanForSecret, type SecretScan } from './secrets.js';
import { days, fetchTruth, type Truth } from './truth.js';

/** The suite's periods: six past, final days (the emulator restates nothing older than its window). */
export const FROM = '2026-01-01';
export const TO = '2026-01-06';
export const PERIODS = days(FROM, TO);
/** `now` for heal: the day after TO, so heal's window (up to yesterday) is exactly FROM..TO. */
export const HEAL_NOW = new Date('2026-01-07T12:00:00Z');
export const HEAL_DAYS = PERIODS.length;
/** The fault cases plan a request per period (days_per_request 1): what they count is pulls, one per
 * period. Faults meeting requests of several days: test/int/queue/acceptance.test.ts. */
export const EACH_PERIOD = [{ name: 'default', reports: undefined, daysPerRequest: 1 }] as const;

export interface Suite {
  readonly key: string;
  readonly emulator: RunningEmulator;
  readonly reports: ReportJob[];
  readonly jobs: JobSet;
  readonly truth: Truth;
  /** A fresh database and prefix, remembered for the secrets scan and the cleanup. */
  newCase(): Promise<{ db: TestDatabase; prefix: string; env: Record<string, string> }>;
  /** Log lines of every pipeline the file ran (added by the cases). */
  readonly logLines: string[];
  /** Extra Redis servers a case used (the private one of the restart case). */
  readonly extraRedis: Array<{ url: string; prefix: string }>;
  /** Searches every log line, Redis key and value, and database of the file for the key. */
  scan(): Promise<SecretScan[]>;
  close(): Promise<void>;
}

/** Starts the file's emulator (only the canary key is accepted) and computes the truth. */
export async function openSuite(options: Partial<EmulatorOptions> = {}): Promise<Suite> {
  const key = canaryKey();
  const emulator = await startEmulator({
    seed: 11,
    cellsPerDay: 200,
    lateDataDays: 0,
    demoKey: false,
    ...options,
    keys: [{ key }, ...(options.keys ?? [])],
  });
  const { jobs, reports } = suiteReports();
  const truth = await fetchTruth(emulator.url, key, reports, PERIODS);
  emulator.resetStats();
  const dbs: TestDatabase[] = [];
  const prefixes: string[] = [];
  const logLines: string[] = [];
  const extraRedis: Array<{ url: string; prefix: string }> = [];
  return {
    key,
    emulator,
    reports,
    jobs,
    truth,
    logLines,
    extraRedis,
    newCase: async () => {
      const db = await createTestDatabase();
      const prefix = testPrefix();
      dbs.push(db);
      prefixes.push(prefix);
      const env = suiteEnv({
        baseUrl: emulator.url,
        apiKey: key,
        databaseUrl: db.url,
        redisUrl: REDIS_URL,
        prefix,
      });
      return { db, prefix, env };
    },
    scan: async () => {
      const scans: SecretScan[] = [];
      for (const [i, db] of dbs.entries())
        scans.push(
          await scanForSecret({
            secret: key,
            logLines: i === 0 ? logLines : [],
            redis: [{ url: REDIS_URL, prefix: prefixes[i] ?? '' }, ...(i === 0 ? extraRedis : [])],
            database: { url: db.url, pool: db.pool },
          }),
        );
      return scans;
    },
    close: async () => {
      await emulator.close();
      await Promise.allSettled(dbs.map((d) => d.drop()));
    },
  };
}

/** The latest report_loads row of a period. */
export async function lastLoad(
  pool: Pool,
  report: string,
  start: string,
): Promise<{ load_id: string; status: string; error: string | null; raw: boolean } | undefined> {
  const { rows } = await pool.query<{ load_id: string; status: string; error: string | null; raw: boolean }>(
    `SELECT l.load_id::text, l.status, l.error, r.load_id IS NOT NULL AS raw
       FROM ${qualified(TEST_SCHEMA, 'report_loads')} l
       LEFT JOIN ${qualified(TEST_SCHEMA, 'report_raw')} r ON r.load_id = l.load_id
      WHERE l.report = $1 AND l.period_start = $2 ORDER BY l.load_id DESC LIMIT 1`,
    [report, start],
  );
  return rows[0];
}

/** Requests the emulator answered (or faulted) on GET /v2/reports since its last stats reset. */
export function reportRequests(emulator: RunningEmulator): number {
  return emulator.stats().requests['GET /v2/reports'] ?? 0;
}
