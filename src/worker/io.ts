// Wires the pull's I/O to the real parts: the API client and the warehouse loader.
import type { Pool } from 'pg';
import type { Config } from '../config/env.js';
import type { ReportJob } from '../config/jobs.js';
import type { ReportLookup } from '../config/live-jobs.js';
import { createApiClientFromConfig, type ApiClient } from '../api/client.js';
import { BODY_MB } from '../api/body.js';
import type { AttemptInfo } from '../api/http.js';
import { syncClientOptions } from '../catalogue/request.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../flatten/types.js';
import { takeFetchToken } from '../warehouse/fetch-token.js';
import { loadPulledPeriod, recordFailedPull, type LoadOptions } from '../warehouse/load.js';
import type { RequestGate } from '../api/gate.js';
import { UnknownAccountError, type Fetched, type PullDeps } from './pull.js';

/** The part of the API client a pull uses. */
export interface ReportFetcher {
  /** `signal` aborts the request (worker shutdown); the error then has code ABORTED. */
  fetchReport(
    query: { dimensions: ReportJob['dimensions']; period: Period },
    signal?: AbortSignal,
  ): Promise<Fetched>;
  close?(): Promise<void>;
}

/** The fetcher of each account (undefined for an account this worker does not know). */
export type FetcherFor = (account: string) => ReportFetcher | undefined;

/**
 * PullDeps over the accounts' fetchers (one fetcher: every pull's) and the warehouse loader in
 * `schema`; `loadOptions.secrets` are stored nowhere, neither in a loaded body nor in a recorded failure.
 */
export function pullDeps(
  reports: ReportLookup,
  fetcher: ReportFetcher | FetcherFor,
  pool: Pool,
  schema: string,
  signal?: AbortSignal,
  loadOptions: LoadOptions = {},
): PullDeps {
  const fetcherFor: FetcherFor = typeof fetcher === 'function' ? fetcher : () => fetcher;
  return {
    reports,
    fetchToken: () => takeFetchToken(pool, schema),
    fetch: (report, period, account) => {
      const own = fetcherFor(account);
      if (own === undefined)
        return Promise.reject(
          new UnknownAccountError(`account "${account}" has no API settings in this worker`),
        );
      return own.fetchReport({ dimensions: report.dimensions, period }, signal);
    },
    load: (report, period, f, jobId, account) =>
      loadPulledPeriod(
        pool,
        schema,
        {
          account,
          report,
          period,
          body: f.stream ?? f.body,
          fetchedAt: f.fetchedAt,
          fetchToken: f.fetchToken,
          attempts: f.attempts,
          bytes: f.bytes,
          fetchMs: f.durationMs,
          ...(jobId === undefined ? {} : { jobId }),
        },
        loadOptions,
      ),
    recordFailure: (report, period, failure) =>
      recordFailedPull(
        pool,
        schema,
        {
          account: failure.account,
          report,
          period,
          error: failure.error instanceof Error ? failure.error : new Error(String(failure.error)),
          attempts: failure.attempts,
          fetchToken: failure.fetchToken,
          ...(failure.jobId === undefined ? {} : { jobId: failure.jobId }),
          ...(failure.body === undefined ? {} : { body: failure.body }),
        },
        loadOptions.secrets,
      ),
  };
}

/** Hooks the worker passes to the API client it creates. */
export interface FetcherHooks {
  /** Awaited before every HTTP request (the shared rate limit). */
  beforeRequest(): Promise<void>;
  /** Called after every HTTP request: its status (undefined: no response) and its attempt number. */
  onAttempt(info: { status: number | undefined; attempt: number; path: string }): void;
  /** The API said, in a success's usage headers, that no request is left for this many ms. */
  onExhausted?(ms: number): void;
}

/**
 * The API client of `config`, for a worker: a 429 throws at once (the worker pauses the whole
 * queue for Retry-After instead of one request sleeping), every request, retries included,
 * first takes a slot of the shared rate limit, and bodies from ADOPS_STREAM_BODY_MB on are loaded
 * as they stream in.
 */
export function createWorkerApi(
  config: Config,
  logger: Logger,
  hooks: FetcherHooks,
): { client: ApiClient; fetcher: ReportFetcher } {
  const client = createApiClientFromConfig(config, logger, {
    on429: 'throw',
    // Awaited by the client before every attempt, retries included.
    beforeRequest: hooks.beforeRequest,
    onAttempt: (a: AttemptInfo) => {
      hooks.onAttempt({ status: a.status, attempt: a.attempt, path: a.path });
      if (a.exhaustedForMs !== undefined) hooks.onExhausted?.(a.exhaustedForMs);
    },
  });
  return {
    client,
    fetcher: {
      fetchReport: (query, signal) =>
        client.fetchReport(query, {
          ...(signal === undefined ? {} : { signal }),
          streamFromBytes: config.http.streamBodyMb * BODY_MB,
        }),
      close: () => client.close(),
    },
  };
}

/**
 * The API client of a worker's catalogue syncs: one HTTP attempt per call with 429s thrown, so
 * the sync's requester retries each request itself (429s through the shared pause of `gate`,
 * faults with backoff), and every attempt takes a slot of the shared rate limit.
 */
export function createSyncApi(
  config: Config,
  logger: Logger,
  gate: RequestGate,
  onAttempt: FetcherHooks['onAttempt'],
  signal?: AbortSignal,
): ApiClient {
  return createApiClientFromConfig(config, logger, {
    ...syncClientOptions(gate),
    ...(signal === undefined ? {} : { signal }),
    onAttempt: (a: AttemptInfo) => onAttempt({ status: a.status, attempt: a.attempt, path: a.path }),
  });
}
