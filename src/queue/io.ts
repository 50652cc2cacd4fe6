// Wires the pull's I/O to the real parts: the API client and the warehouse loader.
import type { Pool } from 'pg';
import type { Config } from '../config/env.js';
import type { ReportJob } from '../config/jobs.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../report/types.js';
import { loadPulledPeriod, recordFailedPull } from '../warehouse/load.js';
import type { Fetched, PullDeps } from './pull.js';

/** The part of the API client a pull uses. */
export interface ReportFetcher {
  fetchReport(query: { dimensions: ReportJob['dimensions']; period: Period }): Promise<Fetched>;
  close?(): Promise<void>;
}

/** PullDeps over a fetcher and the warehouse loader in `schema`. */
export function pullDeps(
  reports: readonly ReportJob[],
  fetcher: ReportFetcher,
  pool: Pool,
  schema: string,
): PullDeps {
  return {
    reports: new Map(reports.map((r) => [r.name, r])),
    fetch: (report, period) => fetcher.fetchReport({ dimensions: report.dimensions, period }),
    load: (report, period, f, jobId) =>
      loadPulledPeriod(pool, schema, {
        report,
        period,
        body: f.body,
        fetchedAt: f.fetchedAt,
        attempts: f.attempts,
        bytes: f.bytes,
        fetchMs: f.durationMs,
        ...(jobId === undefined ? {} : { jobId }),
      }),
    recordFailure: async (report, period, failure) => {
      await recordFailedPull(pool, schema, {
        report,
        period,
        error: failure.error instanceof Error ? failure.error : new Error(String(failure.error)),
        attempts: failure.attempts,
        ...(failure.jobId === undefined ? {} : { jobId: failure.jobId }),
      });
    },
  };
}

/** Hooks the worker passes to the API client it creates. */
export interface FetcherHooks {
  /** Awaited before every HTTP request (the shared rate limit). */
  beforeRequest(): Promise<void>;
  /** Called after every HTTP request with its status (undefined: no response) and whether it is retried. */
  onAttempt(status: number | undefined, willRetry: boolean): void;
}

/** The API client of `config`, throwing on 429 so the queue (not one request) waits it out. */
export async function apiFetcher(
  config: Config,
  logger: Logger,
  hooks: FetcherHooks,
): Promise<ReportFetcher> {
  void config;
  void logger;
  void hooks;
  throw new Error('the API client is not wired yet');
}
