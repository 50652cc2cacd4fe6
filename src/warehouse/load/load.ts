// The load of one fetched period: rows and totals in, in one transaction that locks, fences,
// deletes, writes (inline INSERT or COPY), records and archives. Readers keep seeing the old rows
// until COMMIT; a crash anywhere before it changes nothing. Also the record of a failed pull.
import { performance } from 'node:perf_hooks';
import type { PoolClient } from 'pg';
import type { ReportJob } from '../../config/jobs.js';
import type { UnreconciledReason } from '../../flatten/errors.js';
import type { Reconciliation } from '../../flatten/rows.js';
import type { ReportSummary } from '../../flatten/stream.js';
import type { Period, ReportRow, Totals } from '../../flatten/types.js';
import { COUNTERS, type CounterName } from '../../config/dimensions.js';
import { MissingPartitionError } from '../errors.js';
import { ensureLoadPartition, forgetLoadPartitions, isMissingPartition } from '../schema/partitions.js';
import {
  named,
  qualified,
  reportTable,
  withClient,
  withPgRetry,
  withTransaction,
  type Warehouse,
} from '../pg.js';
import { evolveLockKey, tableOf, type LoadTarget } from '../schema/versions.js';
import { archiveBodySql, type PackedBody } from './archive.js';
import { copyRows } from './copy.js';
import {
  claimPeriodSql,
  inOneStatement,
  insertLoadSql,
  insertRowsSql,
  upsertTotalsSql,
  type LoadRecord,
  restatementOf,
} from './statements.js';

/**
 * What is known of one fetch, carried from the pull to its report_loads row: the period asked for
 * and the facts of the request (the body's size and digest are the archive's, known once it is read).
 */
export interface FetchInfo {
  readonly account: string;
  readonly report: Pick<ReportJob, 'name' | 'dimensions'>;
  readonly period: Period;
  /** Taken from Postgres (takeFetchToken) before the request was sent: the fence against stale loads. */
  readonly fetchToken: number;
  /** When the response was fetched, by the worker's clock: information only, never a fence. */
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
  /** The API's totals and the reconciliation, asked for only once `rows` has been read. */
  summary(): Pick<ReportSummary, 'totals' | 'reconciliation'>;
  /**
   * The rows come from a body held whole: read them before the transaction, so a small period
   * goes inline. Rows of a body still arriving stream into a COPY as they come.
   */
  readonly held?: boolean;
}

/** What a load decided and wrote. `rows` counts rows written (0 when superseded). */
export interface LoadOutcome {
  readonly loadId: number;
  readonly status: 'loaded' | 'superseded';
  readonly rows: number;
  readonly reconciled: boolean;
  /** Why not reconciled ('mismatch', 'no totals', 'partial totals'); null when reconciled. */
  readonly unreconciledReason: UnreconciledReason | null;
  /** The per-counter differences when not reconciled (none for 'no totals'), else null. */
  readonly mismatch: unknown | null;
  readonly loadMs: number;
  /** True when the report has a building table version (report evolution) to check after the load. */
  readonly evolving: boolean;
}

export interface LoadOptions {
  /** Per-statement limit inside the load (default 10 minutes: one COPY is one statement). */
  readonly statementTimeoutMs?: number;
  /** Start of the load's clock (to include parsing in load_ms); default now. */
  readonly startedAt?: number;
  /**
   * A period of up to this many rows goes inside the load's last statement instead of a COPY of
   * its own: two round trips fewer for the small periods most pulls are. Default INLINE_MAX_ROWS;
   * 0 sends every load through COPY.
   */
  readonly inlineMaxRows?: number;
}

/** Default of LoadOptions.inlineMaxRows. */
export const INLINE_MAX_ROWS = 10_000;

/**
 * A new fetch token: take it before the request is sent. A response fetched under a lower token
 * than the period's loaded one is stale and is recorded as superseded (see claimPeriodSql).
 */
export async function takeFetchToken(wh: Pick<Warehouse, 'pool' | 'schema'>): Promise<number> {
  const { rows } = await wh.pool.query<{ token: string }>({
    text: 'SELECT nextval($1::regclass)::text AS token',
    values: [qualified(wh.schema, 'fetch_tokens')],
  });
  const token = Number(rows[0]?.token);
  if (!Number.isSafeInteger(token)) throw new Error(`${wh.schema}.fetch_tokens issued no usable token`);
  return token;
}

/**
 * Replaces the period's rows with `source`'s in one transaction, serialized per report, account
 * and period by an advisory lock, unless a response whose fetch started later is already loaded
 * (then the attempt is recorded as superseded and nothing else changes). `packed` is the body to
 * archive (a function: called once the rows are read). The rows of a held body are read before
 * the transaction: at most inlineMaxRows go inside its last statement (and are retried on a
 * deadlock); more, or the rows of a body still arriving, stream into a COPY.
 */
export async function loadPeriod(
  wh: Warehouse,
  info: FetchInfo,
  source: RowSource,
  packed: () => Promise<PackedBody | undefined>,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const startedAt = opts.startedAt ?? performance.now();
  const { report, period } = info;
  const inlineMax = opts.inlineMaxRows ?? INLINE_MAX_ROWS;
  const rows = source.held === true ? await byRowCount(source.rows, inlineMax) : source.rows;
  const input = {
    info,
    rows,
    summary: () => source.summary(),
    packed,
    inline: Array.isArray(rows) && rows.length <= inlineMax,
  };
  // Made in a short transaction of its own: a load never holds a partition's creation open.
  await ensureLoadPartition(wh.pool, wh.schema, report.name, period.start);
  const load = () =>
    withClient(wh.pool, (client, markBroken) =>
      withPgRetry(
        () =>
          withTransaction(client, () => loadInTransaction(client, wh, input, opts, startedAt), {
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
    // A table version made since this process remembered the month: make its partition, then retry.
    forgetLoadPartitions(wh.schema, report.name);
    await ensureLoadPartition(wh.pool, wh.schema, report.name, period.start);
    if (Array.isArray(rows)) return load();
    throw new MissingPartitionError(
      `${report.name} ${period.start}..${period.end}: the partition of its month was missing and is made now; the pull is retried`,
      { cause: error },
    );
  }
}

/** A load's input once the way its rows travel is chosen. */
interface Input {
  readonly info: FetchInfo;
  readonly rows: readonly ReportRow[] | AsyncIterable<ReportRow>;
  readonly summary: RowSource['summary'];
  readonly packed: () => Promise<PackedBody | undefined>;
  /** The rows go inside the last statement (an array of at most inlineMaxRows). */
  readonly inline: boolean;
}

async function loadInTransaction(
  client: PoolClient,
  wh: Warehouse,
  input: Input,
  opts: LoadOptions,
  startedAt: number,
): Promise<LoadOutcome> {
  const { schema } = wh;
  const { report, period, account } = input.info;
  const timeout = String(opts.statementTimeoutMs ?? 600_000);
  // Two-int lock keyed by (schema.report, account/period): loads of other periods or accounts
  // never wait on each other.
  // The claim below must be a statement of its own, so that its snapshot is taken after the lock.
  // Custom plans: a generic plan of the claim's DELETE would lock every partition of the table,
  // where a plan for the period's own dates prunes to (and locks) its month's partition alone.
  // The evolution lock, shared too (and taken last), keeps a swap from retiring the version this
  // load reads below until the load commits: a swap waits for the loads in flight, and a load
  // that comes after a swap finds its version retired.
  await client.query(
    named(
      "SELECT set_config('statement_timeout', $1, true), set_config('plan_cache_mode', 'force_custom_plan', true), " +
        'pg_advisory_xact_lock(hashtext($2), hashtext($3)), pg_advisory_xact_lock_shared(hashtext($4))',
      [
        timeout,
        `${schema}.${report.name}`,
        periodLockKey(account, period),
        evolveLockKey(schema, report.name),
      ],
    ),
  );
  // The version of the table that holds this definition's dimensions (report evolution), read
  // after the locks: a swap switches it under the evolution lock.
  const version = await tableOf(client, schema, report.name, report.dimensions);
  const { table, evolving } = version;
  if (version.retired !== undefined) return refuseRetired(client, wh, input, version.retired, startedAt);
  const found = (
    await client.query<Claimed>(
      named(claimPeriodSql(schema, table, account, report.name, period, input.info.fetchToken)),
    )
  ).rows[0];
  if (found === undefined)
    throw new Error(`the claim of ${report.name} ${period.start}..${period.end} returned no row`);
  const loadId = Number(found.next_id);
  const current = found.load_id === null ? undefined : found;

  // Fencing: a response whose fetch started before the loaded one's must never overwrite it (the
  // claim then deleted nothing).
  if (current !== undefined && found.stale) {
    const outcome = await recordSuperseded(client, schema, input, loadId, startedAt, {
      previousLoadId: Number(current.load_id),
      error: null,
    });
    wh.logger?.info({ loadId, supersededBy: Number(current.load_id) }, 'stale response: load superseded');
    return { ...outcome, evolving };
  }

  const target = {
    schema,
    table,
    account,
    dimensions: report.dimensions,
    periodStart: period.start,
    periodEnd: period.end,
    loadId,
  };
  const inline = input.inline ? (input.rows as readonly ReportRow[]) : undefined;
  const rows =
    inline === undefined
      ? await copyRows(client, target, input.rows, { format: wh.copyFormat })
      : inline.length;
  // A body's totals follow its items: with streamed rows they are known only now (a strict
  // reconciliation throws here, rolling the load back).
  const { totals, reconciliation } = input.summary();
  const checked = reconciliationOf(reconciliation);
  const packed = await input.packed();
  const loadMs = performance.now() - startedAt;
  const record = insertLoadSql(schema, {
    ...baseRecord(input.info),
    ...checked,
    responseBytes: packed?.bytes ?? null,
    loadId,
    status: 'loaded',
    rows,
    restatement: current === undefined ? null : restatementOf(countersOf(current), totals),
    previousLoadId: current === undefined ? null : Number(current.load_id),
    loadMs,
  });
  // The audit row, the totals, the archived body and, for a small period, its rows: one round trip.
  await client.query(
    named(
      inOneStatement([
        record,
        upsertTotalsSql(schema, account, report.name, period, totals, loadId),
        ...(inline === undefined ? [] : [insertRowsSql(target, inline)]),
        ...(packed === undefined ? [] : [archiveBodySql(schema, account, loadId, packed)]),
      ]),
    ),
  );
  wh.logger?.info(
    { loadId, rows, reconciled: checked.reconciled, loadMs: Math.round(loadMs) },
    'period loaded',
  );
  return { loadId, status: 'loaded', rows, ...checked, loadMs, evolving };
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
    jobId: info.jobId ?? null,
  } satisfies Partial<LoadRecord>;
}

/**
 * Records the attempt as superseded (no rows, no totals written) with its body archived. The rows
 * are still read: a body that does not parse is a failed pull, superseded or not.
 */
async function recordSuperseded(
  client: PoolClient,
  schema: string,
  input: Input,
  loadId: number,
  startedAt: number,
  why: { previousLoadId: number | null; error: string | null },
): Promise<Omit<LoadOutcome, 'evolving'>> {
  for await (const _row of input.rows);
  const checked = reconciliationOf(input.summary().reconciliation);
  const packed = await input.packed();
  const loadMs = performance.now() - startedAt;
  const record = insertLoadSql(schema, {
    ...baseRecord(input.info),
    ...checked,
    responseBytes: packed?.bytes ?? null,
    loadId,
    status: 'superseded',
    rows: null,
    restatement: null,
    previousLoadId: why.previousLoadId,
    error: why.error,
    loadMs,
  });
  const account = input.info.account;
  await client.query(
    named(
      inOneStatement([
        record,
        ...(packed === undefined ? [] : [archiveBodySql(schema, account, loadId, packed)]),
      ]),
    ),
  );
  return { loadId, status: 'superseded', rows: 0, ...checked, loadMs };
}

/**
 * A load whose definition's dimensions are a retired version's (its pull read the definition
 * before the report switched to a new shape) is refused: recorded as superseded, nothing written
 * to the retired table, which no reader sees. Status and heal count only loads of the serving
 * version, so the period shows missing until a pull of the current definition loads it.
 */
async function refuseRetired(
  client: PoolClient,
  wh: Warehouse,
  input: Input,
  retired: NonNullable<LoadTarget['retired']>,
  startedAt: number,
): Promise<LoadOutcome> {
  const { rows } = await client.query<{ id: string }>(
    named(`SELECT nextval(pg_get_serial_sequence($1, 'load_id'))::text AS id`, [
      qualified(wh.schema, 'report_loads'),
    ]),
  );
  const loadId = Number(rows[0]?.id);
  const { report } = input.info;
  const stable = reportTable(report.name);
  const error =
    `its dimensions (${report.dimensions.join(', ')}) are those of version ${retired.version} of ${stable}, ` +
    `retired since ${stable} serves ${retired.serving === null ? 'a newer version' : `version ${retired.serving}`}: ` +
    'not loaded (superseded); a pull of the current definition loads the period (adops heal finds it missing)';
  const outcome = await recordSuperseded(client, wh.schema, input, loadId, startedAt, {
    previousLoadId: null,
    error,
  });
  wh.logger?.warn({ loadId, version: retired.version, serving: retired.serving }, `load refused: ${error}`);
  return { ...outcome, evolving: false };
}

/** The reconciled, unreconciled_reason and mismatch columns (and outcome fields) of a reconciliation. */
function reconciliationOf(r: Reconciliation): {
  reconciled: boolean;
  unreconciledReason: UnreconciledReason | null;
  mismatch: unknown | null;
} {
  if (r.ok) return { reconciled: true, unreconciledReason: null, mismatch: null };
  const reason = r.reason ?? 'mismatch';
  // 'no totals' has no differences to list: mismatch stays null rather than an empty array.
  return {
    reconciled: false,
    unreconciledReason: reason,
    mismatch: reason === 'no totals' ? null : r.differences,
  };
}

/**
 * The rows as an array when there are at most `max` (read now, before any lock), else a stream of
 * them that starts with those read: the choice of inline INSERT or COPY is made by rows, not bytes.
 */
async function byRowCount(
  rows: RowSource['rows'],
  max: number,
): Promise<readonly ReportRow[] | AsyncIterable<ReportRow>> {
  if (Array.isArray(rows) || max <= 0) return rows;
  const stream = rows as AsyncIterable<ReportRow> & { batches?: () => AsyncIterable<readonly ReportRow[]> };
  const batches = (stream.batches?.() ?? single(stream))[Symbol.asyncIterator]();
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
  return {
    batches: rest,
    async *[Symbol.asyncIterator]() {
      for await (const batch of rest()) yield* batch;
    },
  } as AsyncIterable<ReportRow>;
}

/** Rows one at a time, as batches of one. */
async function* single(rows: AsyncIterable<ReportRow>): AsyncGenerator<readonly ReportRow[]> {
  for await (const row of rows) yield [row];
}

/**
 * The second key of a period's load lock: the account is part of it, so one account's load never
 * waits on another's of the same period. The default account keeps the key of earlier releases,
 * so a worker of the previous release and one of this one still exclude each other during an upgrade.
 */
export function periodLockKey(account: string, period: Period): string {
  const key = `${period.start}/${period.end}`;
  return account === 'default' ? key : `${account}/${key}`;
}

/**
 * The claim's answer: a new load id, whether the loaded response's fetch started after ours, and the
 * period's report_totals row joined to its load (bigints as text: pg's default); the totals
 * columns are null for a period never loaded, or for a counter that load was not given.
 */
type Claimed = {
  next_id: string;
  stale: boolean;
  load_id: string | null;
  fetch_token: string | null;
} & Record<CounterName, string | null>;

function countersOf(row: Claimed): Totals {
  const out = {} as Totals;
  for (const c of COUNTERS) {
    const v = row[c];
    out[c] = v === null ? null : Number(v);
  }
  return out;
}

/** A pull that failed before or during loading, as recordFailedPull records it. */
export interface FailedPull {
  /** A failure before any fetch token was taken has none (a test's, an old record's). */
  readonly info: Omit<FetchInfo, 'fetchToken'> & { readonly fetchToken?: number };
  /** report_loads.error: the error's text, secrets already redacted. */
  readonly error: string;
  /** The body, when there was one: archived so the failure can be replayed once fixed. */
  readonly packed?: PackedBody | undefined;
}

/**
 * Records a failed pull in report_loads (status failed, the error) without touching the period's
 * rows or totals; archives the body if given. Returns the load_id.
 */
export async function recordFailedPull(wh: Warehouse, f: FailedPull): Promise<number> {
  const { info, packed } = f;
  return withClient(wh.pool, (client, markBroken) =>
    withTransaction(
      client,
      async () => {
        const { rows } = await client.query<{ load_id: string }>(
          insertLoadSql(wh.schema, {
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
            error: f.error,
          }),
        );
        const loadId = Number(rows[0]?.load_id);
        if (packed !== undefined) await client.query(archiveBodySql(wh.schema, info.account, loadId, packed));
        return loadId;
      },
      { onRollbackError: markBroken },
    ),
  );
}
