// One pull on one screen: fetch (api) -> rows (flatten, streamed) -> load, one FetchInfo carried to the
// period's report_loads row. A failed pull is recorded there with its step and comes back classified.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { FetchedReport } from '../api/client.js';
import { ReportBody } from '../api/body.js';
import { ApiError } from '../api/errors.js';
import { bodyDigest, repeatsPrevious } from '../api/malformed.js';
import type { ReportJob, ReportLookup } from '../platform/config/jobs.js';
import type { Logger } from '../platform/log/logger.js';
import type { Period } from '../flatten/types.js';
import { classifyFailure, type Failure, errorCode } from '../platform/retry/classify.js';
import { pullAccount, type PullJobData } from '../platform/queue/jobs.js';
import type { Dimension } from '../platform/config/dimensions.js';
import { isMalformedBody, ReportFormatError } from '../flatten/errors.js';
import type { ParsedReport } from '../flatten/parse.js';
import { streamReport } from '../flatten/stream.js';
import { redactBuffer } from '../platform/log/redact.js';
import { AdopsError, TerminalError } from '../platform/retry/errors.js';
import { archivedLoad, BodyArchive, latestBodyDigest, packBody } from './archive.js';
import {
  loadPeriod,
  periodsOf,
  recordFailedPull,
  takeFetchToken,
  type FetchInfo,
  type LoadOptions,
  type LoadOutcome,
  type RowSource,
} from './load.js';
import { RowValueError } from './encode.js';
import { reportTable, type Warehouse } from '../platform/pg/handle.js';
import { endedFrom, hasEnded, reportTimezone } from '../plan/bounds.js';
import { pullLabel, requestPeriods } from '../plan/pulls.js';
import { inSpans, RequestSizes, spanDays, splittable } from './split.js';
import { localDate } from '../platform/dates/calendar.js';

/** The part of the API client a pull uses; `signal` aborts the request (shutdown: code ABORTED). */
export interface ReportFetcher {
  fetchReport(
    query: { dimensions: ReportJob['dimensions']; period: Period },
    signal?: AbortSignal,
  ): Promise<FetchedReport>;
  close?(): Promise<void>;
}

/** The fetcher of each account (undefined for an account this worker does not know). */
export type FetcherFor = (account: string) => ReportFetcher | undefined;

export interface PullOptions extends LoadOptions {
  /** Turns a whole body into rows, instead of the streaming scan (replay with a corrected parser). */
  readonly parse?: (body: Buffer, dimensions: readonly Dimension[]) => ParsedReport | Promise<ParsedReport>;
  readonly secrets?: readonly string[]; // never stored (the API key): redacted from a recorded error
}

/** What a pull needs: the definitions, each account's fetcher, the warehouse. */
export interface PullDeps {
  readonly reports: ReportLookup;
  /** Whether this worker knows `account` and it runs `report`; absent: every pull is allowed. */
  readonly accountRuns?: (account: string, report: string) => 'yes' | 'unknown account' | 'not run';
  readonly fetcherFor: FetcherFor;
  readonly wh: Warehouse;
  readonly signal?: AbortSignal; // aborts requests in flight (worker shutdown)
  readonly options?: PullOptions;
  readonly now?: () => Date; // says whether a period has ended (tests fix it); default the real clock
  readonly sizes?: RequestSizes; // the request sizes that worked, per account and report (split.ts)
}

/** PullDeps over one fetcher (every account's) or each account's own; the claim's table guesses, the
 * partitions known to exist, the load's statement texts and the request sizes that worked live as long as it. */
export function pullDeps(
  reports: ReportLookup,
  fetcher: ReportFetcher | FetcherFor,
  wh: Warehouse,
  options: PullOptions = {},
  signal?: AbortSignal,
): PullDeps {
  const fetcherFor: FetcherFor = typeof fetcher === 'function' ? fetcher : () => fetcher;
  const opts = {
    ...{ tables: new Map<string, string>(), partitions: new Set<string>(), texts: new Map<string, string>() },
    ...options,
  };
  const sizes = new RequestSizes();
  return { reports, fetcherFor, wh, options: opts, sizes, ...(signal === undefined ? {} : { signal }) };
}

/** The outcome of a pull, as metrics and the job's return value see it: one load (or several requests',
 * together) with the requests made and the splits among them; or why it failed, and which periods. */
export type PullOutcome =
  | {
      readonly ok: true;
      readonly loaded: LoadOutcome;
      readonly fetchMs: number;
      readonly bytes: number;
      readonly requests: number;
      readonly splits: number;
    }
  | {
      readonly ok: false;
      readonly failure: Failure;
      readonly error: unknown;
      readonly loadId?: number; // the report_loads row recording the failure, if any
      readonly periods?: readonly Period[]; // those of the failed request
    };

/** Runs one pull: for each request (a job's periods in runs of the size that worked, split in halves when
 * the server says too much), fence, fetch, rows, load. Never throws: failures come back classified,
 * recorded in report_loads with the failed step (not a 429, a pause, nor a shutdown's abort, ours, nor
 * anything when Postgres is down before the fetch, nor a failure that splits its request). What follows a
 * load (report evolution) is the caller's. */
export async function runPull(
  deps: PullDeps,
  data: PullJobData,
  jobId: string | undefined,
  logger: Logger,
): Promise<PullOutcome> {
  const report = deps.reports.get(data.report);
  const account = pullAccount(data);
  const first: Period = { start: data.periodStart, end: data.periodEnd };
  const periods = report === undefined ? [first] : requestPeriods(first, data.until, report.period);
  const now = deps.now?.() ?? new Date();
  const refused = refusal(deps, data, report, account, periods, now);
  if (refused !== undefined || report === undefined || periods === undefined)
    return { ok: false, failure: classifyFailure(refused), error: refused };
  const job: Job = {
    account,
    report,
    // Provisional while its period runs (only a provisional pull of one period gets here then).
    provisional: !hasEnded(first, reportTimezone(report), now),
    key: `${account}/${report.name}`,
    ...(jobId === undefined ? {} : { jobId }),
  };
  const done: Done = { loads: [], fetchMs: 0, bytes: 0, requests: 0, splits: 0 };
  for (const run of inSpans(periods, deps.sizes?.start(job.key) ?? Infinity)) {
    const failed = await pullRequest(deps, job, run, logger, done);
    if (failed !== undefined) return failed;
  }
  const [one, ...more] = done.loads;
  if (one === undefined)
    throw new Error(`${pullLabel({ report: report.name, period: first })}: no request ran`);
  const loaded = more.reduce(
    (a, b) => ({
      ...a,
      status: a.status === 'loaded' ? a.status : b.status,
      rows: a.rows + b.rows,
      reconciled: a.reconciled && b.reconciled,
      unreconciledReason: a.unreconciledReason ?? b.unreconciledReason,
      mismatch: a.mismatch ?? b.mismatch,
      loadMs: a.loadMs + b.loadMs,
      evolving: a.evolving || b.evolving,
      periods: [...a.periods, ...b.periods],
    }),
    one,
  );
  const { fetchMs, bytes, requests, splits } = done;
  return { ok: true, loaded, fetchMs, bytes, requests, splits };
}

type Job = {
  readonly account: string;
  readonly report: ReportJob;
  readonly key: string;
  readonly provisional: boolean;
  readonly jobId?: string;
};
type Done = { loads: LoadOutcome[]; fetchMs: number; bytes: number; requests: number; splits: number };

/** One request for `periods` (one or several consecutive), fetched and loaded: undefined when it (or its
 * halves, after a failure that splits it) loaded, into `done`; else the failure. */
async function pullRequest(
  deps: PullDeps,
  job: Job,
  periods: readonly Period[],
  logger: Logger,
  done: Done,
): Promise<PullOutcome | undefined> {
  const { account, report, key, provisional, jobId } = job;
  const fail = (error: unknown, loadId?: number, failure = classifyFailure(error)): PullOutcome => ({
    ok: false,
    failure,
    error,
    periods,
    ...(loadId === undefined ? {} : { loadId }),
  });
  const period: Period = { start: periods[0]?.start ?? '', end: periods.at(-1)?.end ?? '' };
  const days = spanDays(periods);
  const split = async (reason: string) => {
    const half = Math.ceil(periods.length / 2);
    const halves = [periods.slice(0, half), periods.slice(half)];
    done.splits++;
    deps.sizes?.split(key, days);
    logger.warn(
      { from: period.start, until: period.end, days, into: halves.map(spanDays), reason },
      `request of ${days} days split in two: the server may take fewer at once`,
    );
    for (const h of halves) {
      const failed = await pullRequest(deps, job, h, logger, done);
      if (failed !== undefined) return failed;
    }
    return undefined;
  };
  // The fence, before the request: a response is as recent as its fetch's start. Postgres unreachable:
  // nothing to record the failure in, and nothing fetched yet.
  const fetchToken = await takeFetchToken(deps.wh).catch((error: unknown) => error);
  if (typeof fetchToken !== 'number') return fail(fetchToken);
  const opts = deps.options ?? {};
  const secrets = opts.secrets ?? [];
  const several = periods.length > 1 ? { periods } : {};
  const info = {
    ...{ account, report, period, ...several, fetchToken, provisional },
    ...(jobId === undefined ? {} : { jobId }),
  };
  let fetched: FetchedReport;
  try {
    const fetcher = deps.fetcherFor(account);
    if (fetcher === undefined)
      throw new TerminalError(`account "${account}" has no API settings in this worker`);
    fetched = await fetcher.fetchReport({ dimensions: report.dimensions, period }, deps.signal);
  } catch (error) {
    const failure = classifyFailure(error);
    if (failure.kind === 'rate-limited' || failure.kind === 'aborted') return fail(error, undefined, failure);
    if (periods.length > 1 && splittable(error)) return split(failure.reason);
    const attempts =
      error instanceof AdopsError && error.attempts !== undefined && error.attempts > 0 ? error.attempts : 1;
    // A malformed 2xx carries its body (the key redacted): archived, so it can be replayed.
    const body = error instanceof ApiError ? error.body : undefined;
    const packed =
      body === undefined ? undefined : await packBody(redactBuffer(body, secrets), bodyDigest(body));
    const failed = { info: { ...info, attempts }, error, step: 'fetch' as const, packed, secrets };
    const loadId = await recordFailedPull(deps.wh, failed).catch((err: unknown) => {
      // Postgres itself may be down; the job's failedReason still carries the reason.
      logger.warn({ err }, 'could not record the failed pull in report_loads');
      return undefined;
    });
    return fail(error, loadId, failure);
  }
  const { fetchedAt, attempts, fetchMs } = fetched;
  try {
    const loaded = await loadFetched(deps.wh, { ...info, fetchedAt, attempts, fetchMs }, fetched.body, opts);
    deps.sizes?.succeeded(key, days);
    done.loads.push(loaded);
    done.fetchMs += fetchMs;
    done.bytes += fetched.body.receivedBytes;
    done.requests++;
    return undefined;
  } catch (error) {
    // A body over the cap is known only as it streams: recorded, then split like a refusal of the range.
    if (periods.length > 1 && splittable(error)) return split(classifyFailure(error).reason);
    // loadFetched recorded the failure (with the raw body) whenever Postgres was reachable.
    return fail(error, error instanceof AdopsError ? error.loadId : undefined);
  }
}

/** Why this worker cannot run the pull (an unknown report or account, a period not ended or, provisional,
 * not started, periods no longer the report's), if it cannot. */
function refusal(
  deps: PullDeps,
  { report: name, provisional }: PullJobData,
  report: ReportJob | undefined,
  account: string,
  periods: readonly Period[] | undefined,
  now: Date,
): TerminalError | undefined {
  if (report === undefined)
    return new TerminalError(
      `report "${name}" has no job definition in this worker's jobs folder: ` +
        'deploy the same jobs/ to every worker, or drop the pull if the report was deleted',
    );
  const runs = deps.accountRuns?.(account, report.name) ?? 'yes';
  if (runs === 'unknown account')
    return new TerminalError(
      `account "${account}" is not in this worker's accounts (ADOPS_ACCOUNTS_FILE): ` +
        'deploy the same accounts file to every worker, or drop the pull if the account was removed',
    );
  if (runs === 'not run')
    return new TerminalError(
      `account "${account}" does not run report "${report.name}" (its reports: list in ADOPS_ACCOUNTS_FILE)`,
    );
  if (periods === undefined)
    return new TerminalError(
      `the pull's periods are not whole ${report.period}s of ${report.name} (its period changed since it was ` +
        'planned): drop it; `adops heal` plans the missing periods anew',
    );
  // Whoever enqueued it (a backfill, a script, an older release), a period still under way would load as
  // final and count as done: refused before anything is fetched or recorded, unless asked for provisional
  // (one period). Nothing is pulled before its period starts.
  const zone = reportTimezone(report);
  const last = periods.at(-1);
  if (last === undefined || hasEnded(last, zone, now)) return undefined;
  const today = provisional === true && periods.length === 1;
  if (today && last.start <= localDate(now, zone)) return undefined;
  const label = pullLabel({ report: report.name, period: last });
  return new TerminalError(
    today
      ? `${label} has not started in its time zone (${zone}): nothing is pulled before it starts`
      : `${label} has not ended in its time zone (${zone}): ` +
          `only an ended period is pulled; it can be pulled from ${endedFrom(last)}`,
  );
}

/** Loads a fetched body, teed to the parser (or `opts.parse`) and the archive, in one transaction. A
 * failure is recorded with the body kept; the body's own fault is rethrown as it is (a malformed body
 * retryable unless it repeats the period's previous body), any other as LoadError. */
export async function loadFetched(
  wh: Warehouse,
  info: FetchInfo,
  body: ReportBody,
  opts: PullOptions = {},
): Promise<LoadOutcome> {
  const startedAt = opts.startedAt ?? performance.now();
  const archive = await BodyArchive.open(wh, info.account, body).catch(async (error: unknown) => {
    // Nothing will read the response: let its connection go.
    await body[Symbol.asyncIterator]().return?.(undefined);
    throw error;
  });
  try {
    const source = await rowsOf(archive, info.report.dimensions, opts);
    return await loadPeriod(wh, { info, source, archive }, { ...opts, startedAt });
  } catch (thrown) {
    const packed = await archive.finish().catch(() => undefined);
    let error = asReportError(thrown, reportTable(info.report.name));
    if (isMalformedBody(error) && error.retryable && packed !== undefined) {
      // Postgres down: keep the error retryable; the retry will find out.
      const [first = info.period] = periodsOf(info);
      const previous = await latestBodyDigest(wh, info.account, info.report.name, first).catch(
        () => undefined,
      );
      if (repeatsPrevious(packed.receivedSha256, previous)) error = error.repeated(packed.receivedSha256);
    }
    // The body's fault (its shape, a value, its totals) is the parse's, whichever step met it.
    const bodysFault = isReportError(error) || error instanceof RowValueError;
    const step = archive.failedStep ?? (bodysFault ? 'parse' : 'load');
    const loadId = await recordFailedPull(wh, { info, error, step, packed, secrets: opts.secrets }).catch(
      () => undefined,
    );
    if (isReportError(error)) throw error;
    const where = `${info.report.name} ${info.period.start}..${info.period.end}`;
    throw new LoadError(
      `loading ${where} failed: ${error.message}; the period's previous rows are unchanged` +
        (loadId === undefined ? '' : ` (recorded as load ${loadId}, raw body kept)`) +
        hintFor(error),
      loadId,
      { cause: error },
    );
  }
}

/** The rows of a body: streamed as the tee passes it on, or whole through `opts.parse`. */
async function rowsOf(
  archive: BodyArchive,
  dimensions: readonly Dimension[],
  opts: PullOptions,
): Promise<RowSource> {
  if (opts.parse === undefined) return { ...streamReport(archive.chunks(), dimensions), held: archive.whole };
  const chunks: Buffer[] = [];
  for await (const chunk of archive.chunks()) chunks.push(chunk);
  const parsed = await opts.parse(Buffer.concat(chunks), dimensions);
  return { rows: parsed.rows, summary: () => parsed };
}

/** Errors that say the body itself is wrong (the parse's verdict): retrying or re-loading it cannot help. */
function isReportError(error: Error): boolean {
  return error instanceof ReportFormatError;
}

/** A repeated row (the report table's 23505, the earlier copy streamed away) is the body's fault. */
function asReportError(thrown: unknown, table: string): Error {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  // The table, a version or a month's partition (report_<name>__v2, __p202604): no report name holds "__".
  const db = error instanceof pg.DatabaseError ? error : undefined;
  if (db?.code !== '23505' || (db.table !== table && db.table?.startsWith(`${table}__`) !== true))
    return error;
  const why = `two rows have the same dimension values: ${db.detail ?? db.table}`;
  return new ReportFormatError('items', why, { cause: error });
}

/** What to do about a Postgres error that says the tables lag the job definitions (undefined table or column). */
function hintFor(error: unknown): string {
  const code = errorCode(error);
  return code === '42P01' || code === '42703'
    ? '; run `adops migrate` so the report tables match the job definitions'
    : '';
}

/** adops replay: reloads the period of `loadId` from its archived body under the original's fetch token (a
 * replay is as old as the fetch that got its body: superseded by a later fetch's load). Throws a
 * TerminalError saying why when the load, its definition or its body is not available. */
export async function replayLoad(
  wh: Warehouse,
  reports: readonly ReportJob[],
  loadId: number,
  opts: PullOptions = {},
): Promise<LoadOutcome> {
  const load = await archivedLoad(wh, loadId);
  if (load === undefined)
    throw new TerminalError(
      `load ${loadId} is not in ${wh.schema}.report_loads; pick a load_id from that table`,
    );
  const report = reports.find((r) => r.name === load.info.report.name);
  const [{ start, end } = load.info.period] = load.info.periods;
  if (report === undefined)
    throw new TerminalError(
      `load ${loadId} is of report ${load.info.report.name}, which has no job definition in ADOPS_JOBS_DIR; restore its definition to replay it`,
    );
  const repull = `re-pull the period instead (adops backfill --report ${report.name} --from ${start} --to ${end})`;
  if (report.dimensions.join(',') !== load.info.report.dimensions.join(','))
    throw new TerminalError(
      `load ${loadId} was pulled with dimensions ${load.info.report.dimensions.join(',')} but ${report.file} now has ${report.dimensions.join(',')}; ` +
        `its body cannot fill the current table: ${repull}`,
    );
  if (load.body === undefined)
    throw new TerminalError(
      `the raw body of load ${loadId} is not kept (no response, or older than ADOPS_RAW_RETENTION_DAYS); ${repull}`,
    );
  return loadFetched(wh, { ...load.info, report, replayOf: loadId }, new ReportBody(load.body, []), opts);
}

/** A load failed; the period's previous rows are untouched, the attempt recorded when Postgres could. */
export class LoadError extends AdopsError {
  override readonly name = 'LoadError';
  constructor(
    message: string,
    loadId: number | undefined, // the report_loads row of the failed attempt, if recorded
    options: { cause?: unknown } = {},
  ) {
    // Retryable as its cause is: a lost connection or a deadlock is, a bad value is not.
    super(
      message,
      { ...options, ...(loadId === undefined ? {} : { loadId }) },
      classifyFailure(options.cause).kind === 'transient',
    );
  }
}
