// The load of one fetched request in one transaction (lock, fence, delete, write, record, archive): readers
// see the old rows until COMMIT; a crash before it changes nothing. Also the record of a failed pull.
// A request of several periods loads them all in that one transaction, each period replaced on its own
// terms (its lock, claim, fence, report_loads and report_totals rows): one COMMIT and a few round trips
// for all of them is what makes a period cheap (per-period transactions would pay them each, and a
// crash could leave part of a request loaded, which is harmless but no cheaper to reason about).
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
import { keptRows, routing, type Routing } from './route.js';
import { isBatched } from './encode.js';
import { restatementOf } from './history.js';
import {
  archiveBodySql,
  claimPeriodsSql,
  encodeRows,
  inOneStatement,
  insertLoadSql,
  insertLoadsSql,
  insertRowsSql,
  lockLoadSql,
  nextvalSql,
  upsertTotalsSql,
  type Claimed,
  type EncodedRows,
  type LoadRecord,
  type PackedBody,
  type PullStep,
} from './sql.js';

/** What is known of one fetch, carried from the pull to its report_loads row (size and digest are the archive's). */
export interface FetchInfo {
  readonly account: string;
  readonly report: Pick<ReportJob, 'name' | 'dimensions'>;
  readonly period: Period; // what the request asked for: date_from..date_until
  /** The periods of `period` loaded from its body, oldest first; absent: `period` itself. */
  readonly periods?: readonly Period[] | undefined;
  /** Taken from Postgres (takeFetchToken) before the request was sent: the fence against stale loads. */
  readonly fetchToken: number;
  readonly fetchedAt?: Date; // by the worker's clock: information only, never a fence
  readonly attempts: number; // HTTP attempts, the successful one included
  readonly fetchMs?: number;
  readonly jobId?: string;
  readonly replayOf?: number; // set by replay: the load whose archived body is re-flattened
  readonly provisional?: boolean; // a period not ended when its fetch started (report_loads.provisional)
}

/** The rows of a body and, once they are read, its totals (flatten's ReportStream, or a test's own). */
export interface RowSource {
  readonly rows: readonly ReportRow[] | AsyncIterable<ReportRow>; // an array is retried on a deadlock
  summary(): Pick<ReportSummary, 'totals' | 'reconciliation'>; // once `rows` has been read
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
  readonly mismatch: unknown; // per-counter differences when not reconciled (none for 'no totals'), else null
  readonly loadMs: number;
  readonly evolving: boolean; // the report has a building table version (report evolution) to check after
  /** Each period's load, oldest first; loadId, status and rows above are the first's, the status any
   * loaded one's, the rows their sum. */
  readonly periods: readonly PeriodLoad[];
}

export interface PeriodLoad {
  readonly period: Period;
  readonly loadId: number;
  readonly status: 'loaded' | 'superseded';
  readonly rows: number;
}

/** The periods a fetch loads. */
export const periodsOf = (info: Pick<FetchInfo, 'period' | 'periods'>): readonly Period[] =>
  info.periods ?? [info.period];

export interface LoadOptions {
  readonly startedAt?: number; // start of the load's clock (to include parsing in load_ms); default now
  /** Up to this many rows (default 10,000; 0: none) go inside the load's last statement instead of a COPY of
   * their own: two round trips fewer for the small periods most pulls are. */
  readonly inlineMaxRows?: number;
  readonly strictReconcile?: boolean; // fail (roll back) when the rows do not sum to the totals
  /** The table each definition loaded into last: the claim's guess (a wrong one costs a second claim). */
  readonly tables?: Map<string, string>;
  /** The months (per schema and report) whose partitions this worker made or found: not asked again. A
   * partition gone since (retention, a new version) fails the load's insert, which makes it and retries. */
  readonly partitions?: Set<string>;
  /** The texts of the load's last statements made so far (inOneStatement): a few shapes per report. */
  readonly texts?: Map<string, string>;
}

const LOAD_STATEMENT_TIMEOUT_MS = 600_000; // per statement: one COPY is one statement
const prepared = (st: Statement) => named(st.text, [...st.values]);

/** A new fetch token, taken before the request is sent: the fence of claimPeriodsSql. */
export async function takeFetchToken(wh: Pick<Warehouse, 'pool' | 'schema'>): Promise<number> {
  // Prepared once per connection: every pull takes one.
  const next = prepared(nextvalSql(wh.schema, 'fetch_tokens'));
  const { rows } = await withClient(wh.pool, (client) => queryOnce<{ id: string }>(client, next));
  const token = Number(rows[0]?.id);
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
 * Replaces each period's rows with the input's in one transaction, serialized per report, account and period,
 * unless a response whose fetch started later is loaded there (that period recorded as superseded). At most
 * inlineMaxRows rows of a held body go inside the last statement (retried on a deadlock); more, or a stream,
 * go by COPY (rows of several periods in one COPY, each row's period by its day).
 */
export async function loadPeriod(
  wh: Warehouse,
  input: LoadInput,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const startedAt = opts.startedAt ?? performance.now();
  const { report, period } = input.info;
  const periods = periodsOf(input.info);
  const inlineMax = opts.inlineMaxRows ?? 10_000;
  const { source } = input;
  const held = source.held === true ? await byRowCount(source.rows, inlineMax) : source.rows;
  const inline = Array.isArray(held) && held.length <= inlineMax ? encodeInline(input.info, held) : undefined;
  // Rows gone inline are held only as their encoding.
  const rows = inline === undefined ? held : [];
  const tx: Tx = { ...input, rows, inline, startedAt, opts };
  // Made in short transactions of their own: a load never holds a partition's creation open.
  const partitions = async (again = false) => {
    for (const month of new Set(periods.map((p) => `${p.start.slice(0, 7)}-01`))) {
      const key = `${wh.schema}\u0000${report.name}\u0000${month}`;
      if (!again && opts.partitions?.has(key) === true) continue;
      await ensureLoadPartition(wh, report.name, month);
      opts.partitions?.add(key);
    }
  };
  await partitions();
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
    // A table version made (or a partition dropped) since the check above: make its partition, then retry.
    await partitions(true);
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
  inline: Inline | undefined;
  startedAt: number;
  opts: LoadOptions;
};

/** Rows going inside the load's last statement: encoded, and (several periods) routed and counted. */
interface Inline {
  readonly rows: EncodedRows;
  readonly route: Routing | undefined;
}

/** No period skipped: the claim, which says which are stale, comes later (their rows are left out in SQL). */
const NONE_SKIPPED: readonly boolean[] = [];

/** Encodes a held request's rows before its transaction (each row checked; several periods: each routed to
 * its period by its day, counted and summed there), so a deadlock's retry sends the same rows again. */
function encodeInline(info: FetchInfo, rows: readonly ReportRow[]): Inline {
  const { period, report } = info;
  const route = routing(period, periodsOf(info), report.dimensions);
  const layout = { periodStart: period.start, periodEnd: period.end, dimensions: report.dimensions };
  const place = route === undefined ? undefined : (row: ReportRow) => route.place(row, NONE_SKIPPED);
  return { rows: encodeRows(layout, rows, place), route };
}

/** What the claim found of one period: its new load, the load it replaces, whether that one is newer. */
interface PeriodClaim {
  readonly period: Period;
  readonly loadId: number;
  readonly previousLoadId: number | null;
  readonly previous: Totals | undefined;
  readonly stale: boolean; // a response fetched after this one is loaded: nothing deleted, nothing written
  rows?: number; // written
}

async function loadInTransaction(client: Client, wh: Warehouse, tx: Tx): Promise<LoadOutcome> {
  const { schema } = wh;
  const { report, account, fetchToken } = tx.info;
  const periods = periodsOf(tx.info);
  // The claim, its own statement so its snapshot is taken after the locks, reads the table version holding
  // these dimensions (a swap switches it under the evolution lock) and deletes the old rows only from the
  // table it guessed if that is the one: a wrong guess (a first load here, a swap since) claims again.
  const key = `${schema}\u0000${report.name}\u0000${report.dimensions.join(',')}`;
  let table = tx.opts.tables?.get(key) ?? reportTable(report.name);
  const claim = () => prepared(claimPeriodsSql(schema, table, account, report, periods, fetchToken));
  const claimed = (result: QueryResult<{ claim: Claimed }> | undefined) =>
    periods.map((p, i) => {
      const row = result?.rows[i]?.claim;
      if (row === undefined)
        throw new Error(`the claim of ${report.name} ${p.start}..${p.end} returned no row`);
      return { row, target: tableFrom(row, report.name, report.dimensions) };
    });
  // BEGIN, the locks and the claim travel together; the server runs them in this order.
  const lock = prepared(lockLoadSql(schema, report.name, account, periods, LOAD_STATEMENT_TIMEOUT_MS));
  const opened = await inOrder(client, ['BEGIN', lock, claim()]);
  let found = claimed(opened[2]);
  if (found[0]?.target.retired === undefined && found[0]?.target.table !== table) {
    table = found[0]?.target.table ?? table;
    tx.opts.tables?.set(key, table);
    found = claimed(await queryOnce(client, claim()));
  }
  const target = found[0]?.target;
  if (target === undefined) throw new Error(`${report.name}: a load of no period`);
  const ends: PeriodClaim[] = found.map(({ row }, i) => {
    const previousLoadId = row.load_id === null ? null : Number(row.load_id);
    // A provisional load's totals are no restatement's baseline, nor is one a restatement.
    const previous = row.provisional === true || tx.info.provisional === true ? null : row.totals;
    // Fencing: a response fetched before the loaded one's never overwrites it (the claim deleted nothing).
    const stale = previousLoadId !== null && row.stale;
    const period = periods[i] ?? tx.info.period;
    return { period, loadId: Number(row.next_id), previousLoadId, previous: previous ?? undefined, stale };
  });
  const { evolving } = target;
  if (target.retired !== undefined) return refuseRetired(client, wh, tx, ends, target.retired);
  for (const { loadId, previousLoadId } of ends.filter((e) => e.stale))
    wh.logger?.info({ loadId, supersededBy: previousLoadId }, 'stale response: load superseded');
  const route =
    tx.inline === undefined ? routing(tx.info.period, periods, report.dimensions) : tx.inline.route;
  const skip = ends.map((e) => e.stale);
  const into = (p: Period, loadId: number) => ({
    ...{ schema, table, account, dimensions: report.dimensions, loadId },
    ...{ periodStart: p.start, periodEnd: p.end },
  });
  const inline: Statement[] = [];
  const [first] = ends;
  if (route === undefined && first !== undefined && !first.stale) {
    const to = into(first.period, first.loadId);
    first.rows = tx.inline?.rows.count ?? (await copyRows(client, to, tx.rows, { format: wh.copyFormat }));
    if (tx.inline !== undefined && tx.inline.rows.count > 0) inline.push(insertRowsSql(to, tx.inline.rows));
  } else if (route !== undefined && skip.includes(false)) {
    // One INSERT or COPY for every period (the request's range as its layout, each row's period by its day).
    const of = ends.map((e) => ({ ...e.period, loadId: e.loadId }));
    const to = into(tx.info.period, first?.loadId ?? 0);
    if (tx.inline !== undefined) {
      // A stale period's rows stay out: no load id.
      const written = of.map((p, i) => (skip[i] === true ? { ...p, loadId: null } : p));
      if (tx.inline.rows.count > 0) inline.push(insertRowsSql(to, tx.inline.rows, written));
    } else {
      const periodOf = (day: string) => of[route.index(day)];
      const kept = keptRows(tx.rows, (row) => route.place(row, skip) >= 0);
      await copyRows(client, { ...to, periodOf }, kept, { format: wh.copyFormat });
    }
    ends.forEach((e, i) => {
      if (!e.stale) e.rows = route.rows(i);
    });
  }
  return { ...(await record(client, wh, tx, ends, { inline, route, error: null })), evolving };
}
/**
 * Writes each period's report_loads row and (if it has rows) totals, the inline rows and the body in one
 * statement. A body is read to its end even when nothing of it is written: one that does not parse is a
 * failed pull, superseded or not. Streamed totals are known only once the rows are read (a strict
 * reconciliation throws here: rollback). A request of several periods is reconciled as a whole against
 * the API's totals, and each period's own totals are the sums of its rows (totals_source 'rows').
 */
async function record(
  client: Client,
  { schema }: Warehouse,
  tx: Tx,
  ends: readonly PeriodClaim[],
  how: {
    readonly inline: readonly Statement[];
    readonly route?: Routing | undefined;
    readonly error: string | null;
  },
): Promise<Omit<LoadOutcome, 'evolving'>> {
  if (ends.every((e) => e.rows === undefined)) for await (const _row of tx.rows);
  const { totals, reconciliation: r } = tx.source.summary();
  if (tx.opts.strictReconcile === true && !r.ok) throw reconciliationError(r.differences, r.reason);
  const reason: UnreconciledReason | null = r.ok ? null : (r.reason ?? 'mismatch');
  // 'no totals' has no differences to list: mismatch stays null rather than an empty array.
  const mismatch = r.ok || reason === 'no totals' ? null : r.differences;
  const checked = { reconciled: r.ok, unreconciledReason: reason, mismatch };
  const packed = tx.archive instanceof BodyArchive ? await tx.archive.finish() : tx.archive;
  const loadMs = performance.now() - tx.startedAt;
  const { account, report } = tx.info;
  const { route } = how;
  // Each loaded period's totals: the API's for a request of one period, else the sums of its rows.
  const owns = ends.map((e, i) =>
    e.rows === undefined ? undefined : route === undefined ? totals : route.totals(i),
  );
  const loads = insertLoadsSql(
    schema,
    ends.map((e, i) => {
      const own = owns[i];
      return loadRecord(
        tx.info,
        e.period,
        {
          reconciled: checked.reconciled,
          unreconciledReason: checked.unreconciledReason,
          mismatch: checked.mismatch,
          responseBytes: i === 0 ? (packed?.bytes ?? null) : null, // the body is archived with the first
          status: own === undefined ? 'superseded' : 'loaded',
          rows: e.rows ?? null,
          restatement: own === undefined || e.previous === undefined ? null : restatementOf(e.previous, own),
          previousLoadId: e.previousLoadId,
          error: own === undefined ? how.error : null,
          failedStep: null,
          loadMs,
        },
        e.loadId,
      );
    }),
  );
  const loaded = ends.flatMap(({ period, loadId }, i) =>
    owns[i] ? [{ period, loadId, totals: owns[i] }] : [],
  );
  const source = route === undefined ? 'api' : 'rows';
  const statements = [loads];
  if (loaded.length > 0) statements.push(upsertTotalsSql(schema, account, report.name, loaded, source));
  statements.push(...how.inline);
  const [first] = ends;
  if (packed !== undefined && first !== undefined)
    statements.push(archiveBodySql(schema, account, first.loadId, packed));
  // The COMMIT waits for this answer: a worker that dies while its rows are written leaves an open
  // transaction, which Postgres rolls back, not a COMMIT on its way.
  await queryOnce(client, prepared(inOneStatement(statements, tx.opts.texts)));
  const periods = ends.map(({ period, loadId, rows }) => ({
    period,
    loadId,
    status: rows === undefined ? ('superseded' as const) : ('loaded' as const),
    rows: rows ?? 0,
  }));
  return {
    loadId: first?.loadId ?? 0,
    status: periods.some((p) => p.status === 'loaded') ? 'loaded' : 'superseded',
    rows: periods.reduce((n, p) => n + p.rows, 0),
    ...checked,
    loadMs,
    periods,
  };
}

/** What a period's report_loads row says beyond its fetch. */
type Outcome = Omit<
  LoadRecord,
  'loadId' | keyof FetchInfo | 'period' | 'dimensions' | 'httpAttempts' | 'replayOf'
>;

/** A period's report_loads row, in one object literal: spreads and overrides of a wide object make V8 give
 * it a new shape property by property (7 kB of garbage a record, measured). */
function loadRecord<Id extends number | undefined>(
  info: FailedPull['info'],
  period: Period,
  o: Outcome,
  loadId: Id,
): LoadRecord & { loadId: Id } {
  return {
    loadId,
    account: info.account,
    report: info.report.name,
    period,
    dimensions: info.report.dimensions,
    status: o.status,
    rows: o.rows,
    reconciled: o.reconciled,
    unreconciledReason: o.unreconciledReason,
    mismatch: o.mismatch,
    restatement: o.restatement,
    previousLoadId: o.previousLoadId,
    replayOf: info.replayOf ?? null,
    httpAttempts: info.attempts,
    responseBytes: o.responseBytes,
    fetchMs: info.fetchMs ?? null,
    loadMs: o.loadMs,
    fetchedAt: info.fetchedAt ?? null,
    fetchToken: info.fetchToken ?? null,
    error: o.error,
    failedStep: o.failedStep,
    jobId: info.jobId ?? null,
    provisional: info.provisional ?? false,
  };
}

/**
 * Refuses a load whose dimensions are a retired version's (its pull read the definition before the report's
 * new shape): recorded as superseded, nothing written to the retired table. Status and heal count only loads
 * of the serving version, so the period shows missing until a pull of the current definition loads it.
 */
async function refuseRetired(
  client: Client,
  wh: Warehouse,
  tx: Tx,
  ends: readonly PeriodClaim[],
  retired: NonNullable<LoadTarget['retired']>,
): Promise<LoadOutcome> {
  const { report } = tx.info;
  const stable = reportTable(report.name);
  const error =
    `its dimensions (${report.dimensions.join(', ')}) are those of version ${retired.version} of ${stable}, ` +
    `retired since ${stable} serves ${retired.serving === null ? 'a newer version' : `version ${retired.serving}`}: ` +
    'not loaded (superseded); a pull of the current definition loads the period (adops heal finds it missing)';
  const outcome = await record(client, wh, tx, ends, { inline: [], error });
  wh.logger?.warn(
    { loadId: outcome.loadId, version: retired.version, serving: retired.serving },
    `load refused: ${error}`,
  );
  return { ...outcome, evolving: false };
}

/** The rows as an array when at most `max` (read now, before any lock), else a stream starting with those
 * read: inline INSERT or COPY is chosen by rows, not bytes. */
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
  readonly packed?: PackedBody | undefined; // the body, if any: archived so the failure can be replayed
  readonly secrets?: readonly string[]; // never stored (the API key): redacted from the error's text
}

/** Records a failed pull in report_loads (the one place that does), a row for each of its periods, with its
 * step, error and body if given; the periods' rows and totals stay. Returns the (first period's) load_id. */
export async function recordFailedPull(wh: Warehouse, f: FailedPull): Promise<number> {
  const { info, packed } = f;
  const insert = (period: Period) =>
    insertLoadSql(
      wh.schema,
      loadRecord(
        info,
        period,
        {
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
        },
        undefined,
      ),
    );
  // Every period of the request failed with it; the body, if any, is kept with the first.
  return inTransaction(wh.pool, async (client) => {
    const ids: number[] = [];
    for (const period of periodsOf(info)) ids.push(Number((await firstRow(client, insert(period)))?.load_id));
    const [loadId = 0] = ids;
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
