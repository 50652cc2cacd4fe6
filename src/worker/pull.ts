// One pull: fetch a report period from the API, load it into Postgres. The I/O is passed in, so
// this file decides only what happens on success and on each kind of failure.
import type { ReportJob } from '../config/jobs.js';
import type { ReportLookup } from '../config/live-jobs.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../flatten/types.js';
import { classifyFailure, type Failure } from '../retry/classify.js';
import { AdopsError, TerminalError } from '../retry/errors.js';
import { ApiResponseError } from '../api/errors.js';
import { pullAccount, type PullJobData } from '../queue/payload.js';

/** What the API client returned for one period. */
export interface Fetched {
  readonly body: Buffer;
  /** A big body as it arrives (`body` is then empty): loaded as it streams in. */
  readonly stream?: AsyncIterable<Buffer>;
  readonly fetchedAt: Date;
  readonly attempts: number;
  readonly bytes: number;
  readonly durationMs: number;
}

/** What the loader did with it. */
export interface Loaded {
  readonly loadId: number;
  readonly status: 'loaded' | 'superseded';
  readonly rows: number;
  readonly reconciled: boolean;
  readonly loadMs: number;
  /** True when the report has a building table version (report evolution). */
  readonly evolving?: boolean;
}

/** A fetch with the fencing token taken before its request was sent. */
export type FencedFetch = Fetched & { readonly fetchToken: number };

/** The I/O a pull needs. */
export interface PullDeps {
  readonly reports: ReportLookup;
  /**
   * Whether this worker knows `account` and the account runs `report` (ADOPS_ACCOUNTS_FILE);
   * absent: every pull is allowed (a single-account deployment, tests).
   */
  readonly accountRuns?: (account: string, report: string) => 'yes' | 'unknown account' | 'not run';
  /** A fencing token from Postgres (never a clock), taken before the fetch starts. */
  fetchToken(): Promise<number>;
  /** Fetches through `account`'s own API client and rate limit. */
  fetch(report: ReportJob, period: Period, account: string): Promise<Fetched>;
  load(
    report: ReportJob,
    period: Period,
    fetched: FencedFetch,
    jobId: string | undefined,
    account: string,
  ): Promise<Loaded>;
  /**
   * Records a failed fetch in report_loads so `adops status` and `adops heal` see it, archiving
   * `body` when the API answered one it could not use (a malformed 2xx).
   */
  recordFailure(
    report: ReportJob,
    period: Period,
    failure: {
      error: unknown;
      attempts: number;
      jobId: string | undefined;
      fetchToken: number;
      body?: Buffer;
      account: string;
    },
  ): Promise<number | void>;
}

/** The outcome of a pull, as metrics and the job's return value see it. */
export type PullOutcome =
  | { readonly ok: true; readonly loaded: Loaded; readonly fetched: Fetched }
  | {
      readonly ok: false;
      readonly failure: Failure;
      readonly error: unknown;
      /** The report_loads row recording the failure, when there is one. */
      readonly loadId?: number;
    };

/** Thrown for a pull naming a report that no job definition has (deleted since it was queued). */
export class UnknownReportError extends TerminalError {
  override readonly name = 'UnknownReportError';
}

/** Thrown for a pull of an account this worker has no settings for, or that does not run the report. */
export class UnknownAccountError extends TerminalError {
  override readonly name = 'UnknownAccountError';
}

/**
 * Runs one pull. Never throws: failures come back classified. A failed fetch is recorded in
 * report_loads here (a 429 is a pause and a shutdown's abort is ours: neither is recorded); a
 * failed load was already recorded by the loader, so it is not recorded twice.
 */
export async function runPull(
  deps: PullDeps,
  data: PullJobData,
  jobId: string | undefined,
  logger: Logger,
): Promise<PullOutcome> {
  const report = deps.reports.get(data.report);
  if (report === undefined) {
    const error = new UnknownReportError(
      `report "${data.report}" has no job definition in this worker's jobs folder: ` +
        'deploy the same jobs/ to every worker, or drop the pull if the report was deleted',
    );
    return { ok: false, failure: classifyFailure(error), error };
  }
  const account = pullAccount(data);
  const runs = deps.accountRuns?.(account, report.name) ?? 'yes';
  if (runs !== 'yes') {
    const error = new UnknownAccountError(
      runs === 'unknown account'
        ? `account "${account}" is not in this worker's accounts (ADOPS_ACCOUNTS_FILE): ` +
            'deploy the same accounts file to every worker, or drop the pull if the account was removed'
        : `account "${account}" does not run report "${report.name}" (its reports: list in ADOPS_ACCOUNTS_FILE)`,
    );
    return { ok: false, failure: classifyFailure(error), error };
  }
  const period: Period = { start: data.periodStart, end: data.periodEnd };
  let fetchToken: number;
  try {
    // Before the request: a response is as recent as the moment its fetch started.
    fetchToken = await deps.fetchToken();
  } catch (error) {
    // Postgres is unreachable: nothing to record the failure in, and nothing fetched yet.
    return { ok: false, failure: classifyFailure(error), error };
  }
  let fetched: FencedFetch;
  try {
    fetched = { ...(await deps.fetch(report, period, account)), fetchToken };
  } catch (error) {
    const failure = classifyFailure(error);
    if (failure.kind !== 'rate-limited' && failure.kind !== 'aborted') {
      const body = bodyOf(error);
      const loadId = await deps
        .recordFailure(report, period, {
          error,
          attempts: attemptsOf(error),
          jobId,
          fetchToken,
          account,
          ...(body === undefined ? {} : { body }),
        })
        .catch((recordError: unknown) =>
          // Postgres itself may be down; the job's failedReason still carries the reason.
          logger.warn({ err: recordError }, 'could not record the failed pull in report_loads'),
        );
      if (typeof loadId === 'number') return { ok: false, failure, error, loadId };
    }
    return { ok: false, failure, error };
  }
  try {
    const loaded = await deps.load(report, period, fetched, jobId, account);
    return { ok: true, loaded, fetched };
  } catch (error) {
    // The loader records its own failures (with the raw body) whenever Postgres is reachable.
    const loadId = error instanceof AdopsError ? error.loadId : undefined;
    return { ok: false, failure: classifyFailure(error), error, ...(loadId === undefined ? {} : { loadId }) };
  }
}

/** HTTP attempts an API error reports having made (1 when it does not say). */
function attemptsOf(error: unknown): number {
  const n = error instanceof AdopsError ? error.attempts : undefined;
  return n !== undefined && Number.isInteger(n) && n > 0 ? n : 1;
}

/** The unusable body an API error carries (ApiResponseError of a malformed 2xx), to archive. */
function bodyOf(error: unknown): Buffer | undefined {
  return error instanceof ApiResponseError ? error.body : undefined;
}
