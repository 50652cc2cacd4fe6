// The loader's entry points for a worker: a fetched response in, a loaded (or recorded) period out.
import { performance } from 'node:perf_hooks';
import pg, { type Pool } from 'pg';
import { errorCode } from '../retry/classify.js';
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import type { Dimension } from '../config/dimensions.js';
import type { ReportJob } from '../config/jobs.js';
import {
  DimensionValueError,
  MalformedBodyError,
  ReconciliationError,
  ReportFormatError,
} from '../flatten/errors.js';
import { parseReport, type ParsedReport } from '../flatten/parse.js';
import { streamReport } from '../flatten/stream.js';
import type { Period } from '../flatten/types.js';
import { redactBuffer, redactSecrets } from '../log/redact.js';
import { withClient, withTransaction, reportTable } from './pg.js';
import { LoadError } from './errors.js';
import {
  INLINE_MAX_ROWS,
  loadParsedPeriod,
  type LoadOutcome,
  type ParsedPeriod,
  type PeriodLoadOptions,
} from './load-period.js';
import { insertLoadSql } from './load-record.js';
import { archiveBody, latestBodyDigest, packBody, type PackedBody } from './raw.js';
import { StreamedBody } from './raw-spool.js';

export type { LoadOutcome } from './load-period.js';

/** What a worker hands the loader after a fetch. */
export interface PulledPeriod {
  /** The account the period belongs to; DEFAULT_ACCOUNT when not given. */
  account?: string;
  report: ReportJob;
  period: Period;
  /**
   * Raw response body (archived gzip-compressed in report_raw), or its chunks as they arrive: a
   * streamed body is parsed, loaded and archived as it streams in, in constant memory.
   */
  body: Buffer | AsyncIterable<Buffer>;
  /** When the response was fetched, by the worker's clock: information only, never a fence. */
  fetchedAt: Date;
  /** Taken from Postgres (takeFetchToken) before the request was sent: the fence against stale loads. */
  fetchToken: number;
  attempts: number;
  bytes: number;
  fetchMs: number;
  jobId?: string;
}

/** Turns a body into rows at once, instead of the default streaming scan (e.g. a corrected parser). */
export type ParseFn = (
  body: Buffer,
  dimensions: readonly Dimension[],
) => ParsedReport | Promise<ParsedReport>;

export interface LoadOptions extends PeriodLoadOptions {
  readonly parse?: ParseFn;
  /**
   * Strings never to store (the API key): redacted from the body before it is parsed and archived
   * (its digest as received is kept), and from a recorded error.
   */
  readonly secrets?: readonly string[];
  /** Set by replay: the load whose archived body is being re-flattened. */
  readonly replayOf?: number;
}

/**
 * Parses and loads one pulled period (see loadParsedPeriod). The body is streamed: rows go into
 * the COPY batch by batch as they are scanned, while the body is compressed for the archive beside
 * them, so memory holds the body and a batch of rows, not the whole period. A body that does not
 * parse, repeats a row, or does not reconcile under strictReconcile rolls the load back; it is
 * recorded as a failed load with its raw body kept and the report error is rethrown (a malformed
 * body as a retryable MalformedBodyError, final when it repeats the period's previous body). Any
 * other failure is recorded too and thrown as LoadError.
 */
export async function loadPulledPeriod(
  pool: Pool,
  schema: string,
  received: PulledPeriod,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const startedAt = opts.startedAt ?? performance.now();
  const secrets = opts.secrets ?? [];
  if (!Buffer.isBuffer(received.body))
    return loadStreamedPeriod(pool, schema, { ...received, body: received.body }, opts, startedAt);
  // The body stored is the body parsed, so a replay of the archive gives the same rows.
  const pulled = { ...received, body: redactBuffer(received.body, secrets) };
  const packing = packBody(pulled.body, received.body);
  // Settled even if the load fails first, so a rejection is never left unhandled.
  packing.catch(() => undefined);
  const source = await rowSource(pulled, opts.parse, (opts.inlineMaxRows ?? INLINE_MAX_ROWS) > 0).catch(
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  return loadOrRecord(pool, schema, pulled, source, packing, () => packing, opts, startedAt);
}

/**
 * Loads a body that is still arriving: each chunk is archived (report_raw_parts, outside the
 * transaction) and parsed into the COPY as it comes, and the totals are reconciled when the body
 * ends, before COMMIT. Memory holds a window of the body and a batch of rows, whatever the body's
 * size. A failure rolls the load back; the body, read to its end for the archive, is kept.
 */
async function loadStreamedPeriod(
  pool: Pool,
  schema: string,
  received: PulledPeriod & { body: AsyncIterable<Buffer> },
  opts: LoadOptions,
  startedAt: number,
): Promise<LoadOutcome> {
  if (opts.parse !== undefined)
    throw new Error(
      'loadPulledPeriod: a streamed body is read by the streaming scanner, not a parse function',
    );
  let body: StreamedBody;
  try {
    body = await StreamedBody.open(
      pool,
      schema,
      received.account ?? DEFAULT_ACCOUNT,
      received.body,
      opts.secrets ?? [],
    );
  } catch (error) {
    // Nothing will read the response: let its connection go.
    await received.body[Symbol.asyncIterator]().return?.();
    throw error;
  }
  const source = streamReport(body.chunks(), received.report.dimensions);
  const pulled = { ...received, bytes: () => body.receivedBytes };
  return loadOrRecord(
    pool,
    schema,
    pulled,
    source,
    () => body.finish(),
    () => body.finish(),
    opts,
    startedAt,
  );
}

/**
 * Loads `source` (see loadParsedPeriod); on failure, records the failed load with its archived
 * body (`packedOnFailure`) and throws the report error or a LoadError.
 */
async function loadOrRecord(
  pool: Pool,
  schema: string,
  pulled: Omit<PulledPeriod, 'body' | 'bytes'> & { bytes: number | (() => number) },
  source: Pick<ParsedPeriod, 'rows' | 'summary'> | Error,
  packing: ParsedPeriod['packed'],
  packedOnFailure: () => Promise<PackedBody>,
  opts: LoadOptions,
  startedAt: number,
): Promise<LoadOutcome> {
  const secrets = opts.secrets ?? [];
  try {
    if (source instanceof Error) throw source;
    return await loadParsedPeriod(
      pool,
      schema,
      {
        account: pulled.account ?? DEFAULT_ACCOUNT,
        report: pulled.report,
        period: pulled.period,
        rows: source.rows,
        summary: source.summary,
        packed: packing,
        fetchedAt: pulled.fetchedAt,
        fetchToken: pulled.fetchToken,
        attempts: pulled.attempts,
        bytes: pulled.bytes,
        fetchMs: pulled.fetchMs,
        ...(pulled.jobId === undefined ? {} : { jobId: pulled.jobId }),
        ...(opts.replayOf === undefined ? {} : { replayOf: opts.replayOf }),
      },
      { ...opts, startedAt },
    );
  } catch (thrown) {
    const packed = await packedOnFailure().catch(() => undefined);
    const error = await finalIfRepeated(
      pool,
      schema,
      pulled,
      packed,
      asReportError(thrown, reportTable(pulled.report.name)),
    );
    const loadId = await recordFailure(pool, schema, {
      ...pulled,
      bytes: typeof pulled.bytes === 'number' ? pulled.bytes : pulled.bytes(),
      error,
      packed,
      replayOf: opts.replayOf,
      secrets,
    }).catch(() => undefined);
    if (isReportError(error)) throw error;
    const where = `${pulled.report.name} ${pulled.period.start}..${pulled.period.end}`;
    throw new LoadError(
      `loading ${where} failed: ${error.message}; the period's previous rows are unchanged` +
        (loadId === undefined ? '' : ` (recorded as load ${loadId}, raw body kept)`) +
        hintFor(error),
      loadId,
      { cause: error },
    );
  }
}

/**
 * A malformed body is retryable (the next answer may be whole), unless it is byte for byte the
 * body of the period's previous load: the same broken answer twice in a row is not going away, so
 * the error becomes final. Any other error is returned as it is.
 */
const { DatabaseError } = pg;

async function finalIfRepeated(
  pool: Pool,
  schema: string,
  pulled: Pick<PulledPeriod, 'report' | 'period' | 'account'>,
  packed: PackedBody | undefined,
  error: Error,
): Promise<Error> {
  if (!(error instanceof MalformedBodyError) || !error.retryable || packed === undefined) return error;
  // Postgres down: keep the error retryable; the retry will find out.
  const previous = await latestBodyDigest(
    pool,
    schema,
    pulled.account ?? DEFAULT_ACCOUNT,
    pulled.report.name,
    pulled.period,
  ).catch(() => undefined);
  return previous === packed.receivedSha256 ? error.repeated(packed.receivedSha256) : error;
}

/**
 * Bodies up to this size are parsed whole (a few thousand rows at most), so their rows can go
 * inside the load's last statement; bigger ones are streamed into a COPY.
 */
const INLINE_BODY_BYTES = 1024 * 1024;

/**
 * The rows of a body: parsed whole when small and `inline`, else streamed; or from a caller's
 * parser (replay with a fixed parser).
 */
async function rowSource(
  pulled: PulledPeriod & { body: Buffer },
  parse: ParseFn | undefined,
  inline: boolean,
): Promise<Pick<ParsedPeriod, 'rows' | 'summary'>> {
  const whole = parse ?? (inline && pulled.body.length <= INLINE_BODY_BYTES ? parseReport : undefined);
  if (whole === undefined) return streamReport(pulled.body, pulled.report.dimensions);
  const parsed = await whole(pulled.body, pulled.report.dimensions);
  return { rows: parsed.rows, summary: () => parsed };
}

/** Errors that say the body itself is wrong: retrying or re-loading it cannot help. */
function isReportError(error: Error): boolean {
  return (
    error instanceof ReportFormatError ||
    error instanceof DimensionValueError ||
    error instanceof ReconciliationError
  );
}

/**
 * A streamed body's repeated row surfaces as the report table's unique violation (23505), raised
 * by the partition of the period's month: name it as the body's fault, since the earlier copy of
 * the row was streamed away before the repeat.
 */
function asReportError(thrown: unknown, table: string): Error {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  // The table itself, one of its versions or a month's partition (report_<name>__v2, __p202604):
  // a report name holds no "__", so the prefix is this report's alone.
  const pg = error instanceof DatabaseError ? error : undefined;
  if (pg?.code === '23505' && (pg.table === table || pg.table?.startsWith(`${table}__`) === true))
    return new ReportFormatError(
      'items',
      `two rows have the same dimension values: ${pg.detail ?? pg.table}`,
      {
        cause: error,
      },
    );
  return error;
}

/** What to do about a Postgres error that says the schema is not what the loader expects. */
function hintFor(error: unknown): string {
  const code = errorCode(error);
  // 42P01 undefined table, 42703 undefined column: the tables lag the job definitions.
  if (code === '42P01' || code === '42703')
    return '; run `adops migrate` so the report tables match the job definitions';
  return '';
}

/** A pull that failed before or during loading, as recordFailedPull takes it. */
export interface FailedPull {
  /** DEFAULT_ACCOUNT when not given. */
  account?: string;
  report: Pick<ReportJob, 'name' | 'dimensions'>;
  period: Period;
  error: Error;
  attempts: number;
  fetchedAt?: Date;
  /** The fetch's token (takeFetchToken), so a replay of its archived body is fenced as that fetch. */
  fetchToken?: number;
  /** The response body, when there was one: archived (secrets redacted) so the failure can be replayed once fixed. */
  body?: Buffer;
  jobId?: string;
  fetchMs?: number;
}

/**
 * Records a failed pull in report_loads (status failed, the error) without touching the period's
 * rows or totals; archives the body if given. `secrets` are redacted from the error and the body.
 * Returns the load_id.
 */
export async function recordFailedPull(
  pool: Pool,
  schema: string,
  f: FailedPull,
  secrets: readonly string[] = [],
): Promise<number> {
  const packed = f.body === undefined ? undefined : await packBody(redactBuffer(f.body, secrets), f.body);
  return recordFailure(pool, schema, { ...f, packed, secrets });
}

async function recordFailure(
  pool: Pool,
  schema: string,
  f: Omit<FailedPull, 'body'> & {
    packed: PackedBody | undefined;
    bytes?: number;
    replayOf?: number | undefined;
    secrets: readonly string[];
  },
): Promise<number> {
  return withClient(pool, (client, markBroken) =>
    withTransaction(
      client,
      async () => {
        const account = f.account ?? DEFAULT_ACCOUNT;
        const { rows } = await client.query<{ load_id: string }>(
          insertLoadSql(schema, {
            account,
            report: f.report.name,
            period: f.period,
            dimensions: f.report.dimensions,
            status: 'failed',
            rows: null,
            reconciled: null,
            unreconciledReason: null,
            mismatch: null,
            restatement: null,
            previousLoadId: null,
            replayOf: f.replayOf ?? null,
            httpAttempts: f.attempts,
            responseBytes: f.packed?.bytes ?? null,
            fetchMs: f.fetchMs ?? null,
            loadMs: null,
            fetchedAt: f.fetchedAt ?? null,
            fetchToken: f.fetchToken ?? null,
            error: describeError(f.error, f.secrets),
            jobId: f.jobId ?? null,
          }),
        );
        const loadId = Number(rows[0]?.load_id);
        if (f.packed !== undefined) await archiveBody(client, schema, account, loadId, f.packed);
        return loadId;
      },
      { onRollbackError: markBroken },
    ),
  );
}

/** `Name: message`, then each cause's, so report_loads.error explains itself; `secrets` redacted. */
export function describeError(error: Error, secrets: readonly string[] = []): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && depth < 4; depth++, e = e.cause)
    parts.push(`${e.name}: ${e.message}`);
  return redactSecrets(parts.join(' <- caused by '), secrets);
}
