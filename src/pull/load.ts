// The load of one fetched period: rows and totals in, in one transaction that locks, fences,
// deletes, writes (inline INSERT or COPY), records and archives. Readers keep seeing the old rows
// until COMMIT; a crash anywhere before it changes nothing. Also the record of a failed pull.
import { performance } from 'node:perf_hooks';
import type { Client, QueryResult } from 'pg';
import type { ReportJob } from '../platform/config/jobs.js';
import { reconciliationError, type UnreconciledReason } from '../flatten/errors.js';
import type { BatchedRows, ReportSummary } from '../flatten/stream.js';
import type { Period, ReportRow, Totals } from '../flatten/types.js';
import { ensureLoadPartition, isMissingPartition } from '../schema/partitions.js';
import {
  firstRow,
  inOrder,
  inTransaction,
  named,
  queryOnce,
  reportTable,
  withClient,
  withCopyClient,
  withPgRetry,
  withTransaction,
  type Statement,
  type Warehouse,
} from '../platform/pg/handle.js';
import { TransientError } from '../platform/retry/errors.js';
import { redactSecrets } from '../platform/log/redact.js';
import { tableFrom, type LoadTarget } from '../schema/versions.js';
import { BodyArchive } from './archive.js';
import { copyRows } from './copy.js';
import { isBatched } from './encode.js';
import { restatementOf } from './history.js';
import {
  archiveBodySql,
  claimPeriodSql,
  inOneStatement,
  insertLoadSql,
  insertRowsSql,
  lockLoadSql,
  nextvalSql,
  upsertTotalsSql,
  type Claimed,
  type LoadRecord,
  type PackedBody,
  type PullStep,
} from './sql.js';

/** What is known of one fetch, carried from the pull to its report_loads row (size and digest are the archive's). */
export interface FetchInfo {
  readonly account: string;
  readonly report: Pick<ReportJob, 'name' | 'dimensions'>;
  readonly period: Period;
  /** Taken from Postgres (takeFetchToken) before the request was sent: the fence against stale loads. */
  readonly fetchToken: number;
  /** By the worker's clock: information only, never a fence. */
  readonly fetchedAt?: Date;
  /** HTTP attempts spent, the successful one included. */
  readonly attempts: number;
  readonly fetchMs?: number;
  readonly jobId?: string;
  /** Set by replay: the load whose archived body is being re-flattened. */
  readonly replayOf?: number;
}

/** The rows of a body and, once they are read, its totals (flatten's ReportStream, or a test's own). */
export interface RowSource {
  /** An array is retried on a deadlock; an async iterable is streamed once. */
  readonly rows: readonly ReportRow[] | AsyncIterable<ReportRow>;
  /** The API's totals and the reconciliation, once `rows` has been read. */
  summary(): Pick<ReportSummary, 'totals' | 'reconciliation'>;
  /** The rows come from a body held whole: read before the transaction, so a small period goes inline. */
  readonly held?: boolean;
}

/** What a load decided and wrote. `rows` counts rows written (0 when superseded). */
export interface LoadOutcome {
  readonly loadId: number;
  readonly status: 'loaded' | 'superseded';
  readonly rows: number;
  readonly reconciled: boolean;
  readonly unreconciledReason: UnreconciledReason | null;
  /** The per-counter differences when not reconciled (none for 'no totals'), else null. */
  readonly mismatch: unknown;
  readonly loadMs: number;
  /** True when the report has a building table version (report evolution) to check after the load. */
  readonly evolving: boolean;
}

export interface LoadOptions {
  /** Start of the load's clock (to include parsing in load_ms); default now. */
  readonly startedAt?: number;
  /**
   * A period of up to this many rows (default 10,000; 0: none) goes inside the load's last statement
   * instead of a COPY of its own: two round trips fewer for the small periods most pulls are.
   */
  readonly inlineMaxRows?: number;
  /** Fail the load (rolled back: nothing replaced) when the rows do not sum to the totals. */
  readonly strictReconcile?: boolean;
  /** The table each definition loaded into last: the claim's guess (a wrong one costs a second claim). */
  readonly tables?: Map<string, string>;
}

/** Per-statement limit inside a load: one COPY is one statement. */
const LOAD_STATEMENT_TIMEOUT_MS = 600_000;

/** A statement as a prepared one, for the load's pipelined connection. */
const prepared = (st: Statement) => named(st.text, [...st.values]);

/** A new fetch token, taken before the request is sent: the fence of claimPeriodSql. */
export async function takeFetchToken(wh: Pick<Warehouse, 'pool' | 'schema'>): Promise<number> {
  const token = Number((await firstRow(wh.pool, nextvalSql(wh.schema, 'fetch_tokens')))?.id);
  if (!Number.isSafeInteger(token)) throw new Error(`${wh.schema}.fetch_tokens issued no usable token`);
  return token;
}

/** A load's input: the fetch, its rows, and the body to archive (packed, or the tee that packs it). */
export interface LoadInput {
  readonly info: FetchInfo;
  readonly source: RowSource;
  readonly archive: BodyArchive | PackedBody | undefined;
}

/**
 * Replaces the period's rows with the input's in one transaction, serialized per report, account
 * and period by an advisory lock, unless a response whose fetch started later is already loaded
 * (then the attempt is recorded as superseded, nothing else changes). At most inlineMaxRows rows of
 * a held body go inside the last statement (retried on a deadlock); more, or a stream, go by COPY.
 */
export async function loadPeriod(
  wh: Warehouse,
  input: LoadInput,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const startedAt = opts.startedAt ?? performance.now();
  const { report, period } = input.info;
  const inlineMax = opts.inlineMaxRows ?? 10_000;
  const { source } = input;
  const rows = source.held === true ? await byRowCount(source.rows, inlineMax) : source.rows;
  const inline = Array.isArray(rows) && rows.length <= inlineMax ? rows : undefined;
  const tx: Tx = { ...input, rows, inline, startedAt, opts };
  // Made in a short transaction of its own: a load never holds a partition's creation open.
  await ensureLoadPartition(wh, report.name, period.start);
  const load = () =>
    (inline === undefined ? withCopyClient : withClient)(wh.pool, (client, markBroken) =>
      withPgRetry(
        () =>
          withTransaction(client, () => loadInTransaction(client, wh, tx), {
            begin: null,
            // A failed ROLLBACK means the connection is gone: destroy it, do not pool it.
            onRollbackError: markBroken,
          }),
        Array.isArray(rows) ? 4 : 1,
      ),
    );
  try {
    return await load();
  } catch (error) {
    if (!isMissingPartition(error)) throw error;
    // A table version made since the check above: make its partition, then retry.
    await ensureLoadPartition(wh, report.name, period.start);
    if (Array.isArray(rows)) return load();
    throw new TransientError(
      `${report.name} ${period.start}..${period.end}: the partition of its month was missing and is made now; the pull is retried`,
      { cause: error },
    );
  }
}

/** A load's input once the way its rows travel is chosen (`inline`: inside the last statement). */
type Tx = LoadInput & {
  rows: RowSource['rows'];
  inline: readonly ReportRow[] | undefined;
  startedAt: number;
  opts: LoadOptions;
};

async function loadInTransaction(client: Client, wh: Warehouse, tx: Tx): Promise<LoadOutcome> {
  const { schema } = wh;
  const { report, period, account, fetchToken } = tx.info;
  // The claim, a statement of its own so that its snapshot is taken after the locks, also reads
  // the table version that holds this definition's dimensions (report evolution: a swap switches
  // it under the evolution lock) and deletes the old rows only from the table it guessed when that
  // is the one: a wrong guess (a report's first load here, or a swap since) claims again.
  const key = `${schema}\u0000${report.name}\u0000${report.dimensions.join(',')}`;
  let table = tx.opts.tables?.get(key) ?? reportTable(report.name);
  const claim = () => prepared(claimPeriodSql(schema, table, account, report, period, fetchToken));
  const claimed = (result: QueryResult<{ claim: Claimed }> | undefined) => {
    const row = result?.rows[0]?.claim;
    if (row === undefined)
      throw new Error(`the claim of ${report.name} ${period.start}..${period.end} returned no row`);
    return { row, target: tableFrom(row, report.name, report.dimensions) };
  };
  // BEGIN, the locks and the claim travel together; the server runs them in this order.
  const lock = lockLoadSql(schema, report.name, account, period, LOAD_STATEMENT_TIMEOUT_MS);
  const [, , first] = await inOrder(client, ['BEGIN', prepared(lock), claim()]);
  let { row: found, target } = claimed(first);
  if (target.retired === undefined && target.table !== table) {
    table = target.table;
    tx.opts.tables?.set(key, table);
    ({ row: found, target } = claimed(await queryOnce(client, claim())));
  }
  const loadId = Number(found.next_id);
  const { evolving } = target;
  if (target.retired !== undefined) return refuseRetired(client, wh, tx, loadId, target.retired);
  const previousLoadId = found.load_id === null ? null : Number(found.load_id);

  // Fencing: a response whose fetch started before the loaded one's must never overwrite it (the
  // claim then deleted nothing).
  if (previousLoadId !== null && found.stale) {
    const outcome = await record(client, wh, tx, loadId, { previousLoadId, error: null });
    wh.logger?.info({ loadId, supersededBy: previousLoadId }, 'stale response: load superseded');
    return { ...outcome, evolving };
  }
  const { start: periodStart, end: periodEnd } = period;
  const into = { schema, table, account, dimensions: report.dimensions, loadId, periodStart, periodEnd };
  const rows = tx.inline?.length ?? (await copyRows(client, into, tx.rows, { format: wh.copyFormat }));
  const outcome = await record(client, wh, tx, loadId, {
    previousLoadId,
    rows,
    previous: found.totals ?? undefined,
    inline: tx.inline === undefined ? undefined : insertRowsSql(into, tx.inline),
  });
  return { ...outcome, evolving };
}

/** How record ends a load: `rows` written (`previous` totals, `inline` rows), or superseded (`error`). */
type Ending = { readonly previousLoadId: number | null } & (
  | { rows: number; previous: Totals | undefined; inline: Statement | undefined }
  | { error: string | null; rows?: undefined }
);

/**
 * Writes the load's report_loads row, its totals and inline rows when it has rows, and its body, in
 * one statement. A superseded load's rows are still read: a body that does not parse is a failed pull,
 * superseded or not. Streamed totals are known only once the rows are read (a strict reconciliation
 * throws here, rolling the load back).
 */
async function record(
  client: Client,
  { schema }: Warehouse,
  tx: Tx,
  loadId: number,
  end: Ending,
): Promise<Omit<LoadOutcome, 'evolving'>> {
  if (end.rows === undefined) for await (const _row of tx.rows);
  const { totals, reconciliation: r } = tx.source.summary();
  if (tx.opts.strictReconcile === true && !r.ok) throw reconciliationError(r.differences, r.reason);
  const reason: UnreconciledReason | null = r.ok ? null : (r.reason ?? 'mismatch');
  // 'no totals' has no differences to list: mismatch stays null rather than an empty array.
  const mismatch = r.ok || reason === 'no totals' ? null : r.differences;
  const checked = { reconciled: r.ok, unreconciledReason: reason, mismatch };
  const packed = tx.archive instanceof BodyArchive ? await tx.archive.finish() : tx.archive;
  const loadMs = performance.now() - tx.startedAt;
  const { account, report, period } = tx.info;
  const loaded = end.rows !== undefined;
  const statements: Statement[] = [
    insertLoadSql(schema, {
      ...baseRecord(tx.info),
      ...checked,
      responseBytes: packed?.bytes ?? null,
      loadId,
      status: loaded ? 'loaded' : 'superseded',
      rows: end.rows ?? null,
      restatement:
        end.rows === undefined || end.previous === undefined ? null : restatementOf(end.previous, totals),
      previousLoadId: end.previousLoadId,
      error: end.rows === undefined ? end.error : null,
      loadMs,
    }),
  ];
  if (loaded) statements.push(upsertTotalsSql(schema, account, report.name, period, totals, loadId));
  if (end.rows !== undefined && end.inline !== undefined) statements.push(end.inline);
  if (packed !== undefined) statements.push(archiveBodySql(schema, account, loadId, packed));
  // The COMMIT (withTransaction's) waits for its answer: a worker that dies while its rows are
  // written leaves an open transaction, which Postgres rolls back, not a COMMIT on its way.
  await queryOnce(client, prepared(inOneStatement(statements)));
  return { loadId, status: loaded ? 'loaded' : 'superseded', rows: end.rows ?? 0, ...checked, loadMs };
}

/** The columns of a load's record that come from the fetch itself. */
function baseRecord(info: FailedPull['info']) {
  return {
    account: info.account,
    report: info.report.name,
    period: info.period,
    dimensions: info.report.dimensions,
    replayOf: info.replayOf ?? null,
    httpAttempts: info.attempts,
    fetchMs: info.fetchMs ?? null,
    fetchedAt: info.fetchedAt ?? null,
    fetchToken: info.fetchToken ?? null,
    error: null,
    failedStep: null,
    jobId: info.jobId ?? null,
  } satisfies Partial<LoadRecord>;
}

/**
 * A load whose definition's dimensions are a retired version's (its pull read the definition
 * before the report switched to a new shape) is refused: recorded as superseded, nothing written
 * to the retired table, which no reader sees. Status and heal count only loads of the serving
 * version, so the period shows missing until a pull of the current definition loads it.
 */
async function refuseRetired(
  client: Client,
  wh: Warehouse,
  tx: Tx,
  loadId: number,
  retired: NonNullable<LoadTarget['retired']>,
): Promise<LoadOutcome> {
  const { report } = tx.info;
  const stable = reportTable(report.name);
  const error =
    `its dimensions (${report.dimensions.join(', ')}) are those of version ${retired.version} of ${stable}, ` +
    `retired since ${stable} serves ${retired.serving === null ? 'a newer version' : `version ${retired.serving}`}: ` +
    'not loaded (superseded); a pull of the current definition loads the period (adops heal finds it missing)';
  const outcome = await record(client, wh, tx, loadId, { previousLoadId: null, error });
  wh.logger?.warn({ loadId, version: retired.version, serving: retired.serving }, `load refused: ${error}`);
  return { ...outcome, evolving: false };
}

/**
 * The rows as an array when there are at most `max` (read now, before any lock), else a stream of
 * them that starts with those read: the choice of inline INSERT or COPY is made by rows, not bytes.
 */
async function byRowCount(rows: RowSource['rows'], max: number): Promise<RowSource['rows']> {
  if (Array.isArray(rows) || max <= 0 || !isBatched(rows)) return rows;
  const batches = rows.batches()[Symbol.asyncIterator]();
  const first: ReportRow[] = [];
  for (;;) {
    const step = await batches.next();
    if (step.done === true) return first;
    // A batch array is reused by its producer: copy its rows out.
    for (const row of step.value) first.push(row);
    if (first.length > max) break;
  }
  async function* rest(): AsyncGenerator<readonly ReportRow[]> {
    yield first;
    for (let step = await batches.next(); step.done !== true; step = await batches.next()) yield step.value;
  }
  const stream: BatchedRows = {
    batches: rest,
    async *[Symbol.asyncIterator]() {
      for await (const batch of rest()) yield* batch;
    },
  };
  return stream;
}

/** A pull that failed before or during loading, as recordFailedPull records it. */
export interface FailedPull {
  /** A failure before any fetch token was taken has none (a test's). */
  readonly info: Omit<FetchInfo, 'fetchToken'> & { readonly fetchToken?: number };
  readonly error: unknown;
  readonly step: PullStep;
  /** The body, when there was one: archived so the failure can be replayed once fixed. */
  readonly packed?: PackedBody | undefined;
  /** Strings never to store (the API key): redacted from the error's text. */
  readonly secrets?: readonly string[];
}

/**
 * Records a failed pull in report_loads with the step that failed and the error's text (the one place
 * that does), and its body if given; the period's rows and totals stay. Returns the load_id.
 */
export async function recordFailedPull(wh: Warehouse, f: FailedPull): Promise<number> {
  const { info, packed } = f;
  const insert = insertLoadSql(wh.schema, {
    ...baseRecord(info),
    status: 'failed',
    rows: null,
    reconciled: null,
    unreconciledReason: null,
    mismatch: null,
    restatement: null,
    previousLoadId: null,
    responseBytes: packed?.bytes ?? null,
    loadMs: null,
    error: describeError(f.error, f.secrets),
    failedStep: f.step,
  });
  return inTransaction(wh.pool, async (client) => {
    const loadId = Number((await firstRow(client, insert))?.load_id);
    if (packed !== undefined) await firstRow(client, archiveBodySql(wh.schema, info.account, loadId, packed));
    return loadId;
  });
}

/** `Name: message`, then each cause's, so report_loads.error explains itself; `secrets` redacted. */
export function describeError(error: unknown, secrets: readonly string[] = []): string {
  const parts: string[] = [];
  let e: unknown = error instanceof Error ? error : new Error(String(error));
  for (let depth = 0; e instanceof Error && depth < 4; depth++, e = e.cause)
    parts.push(`${e.name}: ${e.message}`);
  return redactSecrets(parts.join(' <- caused by '), secrets);
}
