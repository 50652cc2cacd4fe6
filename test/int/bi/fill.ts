// A warehouse filled by the emulator through the worker's own pull path (runPull over pullDeps) and
// `adops sync --direct`, for the BI tests: the shipped jobs' reports, chosen days, one account.
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { expect } from 'vitest';
import { createApiClient, type ApiClient } from '../../../src/api/client.js';
import { loadJobs, type ReportJob } from '../../../src/platform/config/jobs.js';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { pullDeps, runPull } from '../../../src/pull/run.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { runCli } from '../../helpers/run-cli.js';

const logger = createLogger({ level: 'silent', secrets: [] });

/** The shipped job definitions (jobs/), which the test template's tables follow. */
export const REPORTS: readonly ReportJob[] = loadJobs('jobs').reports;

/** The `n` days up to yesterday (UTC), oldest first. */
export function lastDays(n: number, now: Date = new Date()): string[] {
  const yesterday = addDays(localDate(now, 'UTC'), -1);
  return Array.from({ length: n }, (_, i) => addDays(yesterday, i - n + 1));
}

/** The environment `adops` needs for this database and emulator. */
export function cliEnv(db: TestDatabase, emulator: RunningEmulator): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_BASE_URL: emulator.url,
    ADOPS_API_KEY: 'demo-key',
    // Nothing listens there: status shows its warehouse half without waiting on the shared Redis.
    REDIS_URL: 'redis://127.0.0.1:1',
    LOG_LEVEL: 'silent',
  };
}

/** Pulls `days` of `reports` (default: every shipped report) into the database; each must load. */
export async function pullDays(
  db: TestDatabase,
  emulator: RunningEmulator,
  days: readonly string[],
  reports: readonly ReportJob[] = REPORTS,
): Promise<void> {
  const api: ApiClient = createApiClient({
    baseUrl: emulator.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    attempts: 2,
  });
  try {
    const fetcher = { fetchReport: (q: Parameters<ApiClient['fetchReport']>[0]) => api.fetchReport(q) };
    const deps = pullDeps(
      new Map(reports.map((r) => [r.name, r])),
      fetcher,
      warehouseOf(db.pool, TEST_SCHEMA),
    );
    for (const day of days)
      for (const report of reports) {
        const outcome = await runPull(
          deps,
          { report: report.name, periodStart: day, periodEnd: day },
          undefined,
          logger,
        );
        expect(outcome.ok, `${report.name} ${day}`).toBe(true);
      }
  } finally {
    await api.close();
  }
}

/** `adops sync --direct`: the catalogue, so the views show campaign and creative names. */
export async function syncCatalogue(db: TestDatabase, emulator: RunningEmulator): Promise<void> {
  const run = await runCli(['sync', '--direct'], cliEnv(db, emulator));
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
}
