// The one transaction that replaces a period's rows: lock, fence, delete, COPY, totals, audit, archive.
// Readers keep seeing the old rows until COMMIT; a crash anywhere before it changes nothing.
import { performance } from 'node:perf_hooks';
import type { Pool, PoolClient } from 'pg';
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import { withClient, withTransaction, withPgRetry, named, qualified, reportTable } from './pg.js';
import type { ReportJob } from '../config/jobs.js';
import type { Logger } from '../log/logger.js';
import { ReconciliationError, type UnreconciledReason } from '../flatten/errors.js';
import type { Reconciliation } from '../flatten/reconcile.js';
import type { ReportSummary } from '../flatten/stream.js';
import { COUNTERS, type CounterName, type Period, type ReportRow, type Totals } from '../flatten/types.js';
import { copyRows, type CopyFormat } from './copy-rows.js';
import { evolveLockKey, tableOf, type LoadTarget } from './schema/versions.js';
import { MissingPartitionError } from './errors.js';
import { ensureLoadPartition, forgetLoadPartitions, isMissingPartition } from './schema/partitions.js';
import { insertRowsSql } from './insert-rows.js';
import {
  claimPeriodSql,
  inOneStatement,
  insertLoadSql,
  upsertTotalsSql,
  type LoadRecord,
} from './load-record.js';
import { archiveBodySql, type PackedBody } from './raw.js';
import { restatementOf } from './restatement.js';

/** What a load decided and wrote. `rows` counts rows written (0 when superseded). */
export interface LoadOutcome {
  loadId: number;
  status: 'loaded' | 'superseded';
  rows: number;
  reconciled: boolean;
  /** Why not reconciled ('mismatch', 'no totals', 'partial totals'); null when reconciled. */
  unreconciledReason: UnreconciledReason | null;
  /** The per-counter differences when not reconciled (none for 'no totals'), else null. */
  mismatch: unknown | null;
  loadMs: number;
  /** True when the report has a building table version (report evolution) to check after the load. */
  evolving: boolean;
}

/** A pulled period as rows (streamed by streamReport, parsed by parseReport, or a test's own). */
export interface ParsedPeriod {
  /** The account the period belongs to; DEFAULT_ACCOUNT when not given. */
  readonly account?: string;
  readonly report: Pick<ReportJob, 'name' | 'dimensions'>;
  readonly period: Period;
  /** An array is retried on a deadlock; an async iterable is streamed once. */
  readonly rows: readonly ReportRow[] | AsyncIterable<ReportRow>;
  /** The API's totals and the reconciliation, asked for only once `rows` has been read. */
  readonly summary: () => Pick<ReportSummary, 'totals' | 'reconciliation'>;
  /**
   * The body to archive; a promise lets compression run beside the COPY; a function is called once
   * the rows are read (a streamed body is archived as it is read, and finished then).
   */
  readonly packed?: PackedBody | Promise<PackedBody> | (() => Promise<PackedBody>);
  /** When the response was fetched, by the fetching worker's clock: information only. */
  readonly fetchedAt: Date;
  /** The fencing token taken when the fetch started (takeFetchToken); a replay keeps its original's. */
  readonly fetchToken: number;
  readonly attempts: number;
  /** The body's size; a function for a streamed body, whose size is known once it is read. */
  readonly bytes: number | (() => number);
  readonly fetchMs: number;
  readonly jobId?: string;
  /** The load whose archived body this one re-flattens. */
  readonly replayOf?: number;
}

export interface PeriodLoadOptions {
  /** Fail the load (rolled back: nothing replaced) when the rows do not sum to the totals. */
  readonly strictReconcile?: boolean;
  /** Per-statement limit inside the load (default 10 minutes: one COPY is one statement). */
  readonly statementTimeoutMs?: number;
  /** Start of the load's clock (to include parsing in load_ms); default now. */
  readonly startedAt?: number;
  readonly logger?: Logger;
  /**
   * Rows given as an array, up to this many, go inside the load's last statement instead of a COPY
   * of their own: two round trips fewer for the small periods most pulls are. Default
   * INLINE_MAX_ROWS; 0 sends every load through COPY.
   */
  readonly inlineMaxRows?: number;
  /** COPY's data format (default binary; text is the fallback behind ADOPS_COPY_FORMAT). */
  readonly copyFormat?: CopyFormat;
}

/** Default of PeriodLoadOptions.inlineMaxRows. */
export const INLINE_MAX_ROWS = 10_000;

/**
 * Replaces the period's rows with `input.rows` in one transaction, serialized per report and
 * period by an advisory lock, unless a response whose fetch started later is already loaded (then the attempt
 * is recorded as superseded and nothing else changes). Retries deadlocks and serialization failures.
 */
export async function loadParsedPeriod(
  pool: Pool,
  schema: string,
  input: ParsedPeriod,
  opts: PeriodLoadOptions = {},
): Promise<LoadOutcome> {
  const startedAt = opts.startedAt ?? performance.now();
  const { report, period } = input;
  // Made in a short transaction of its own: a load never holds a partition's creation open.
  await ensureLoadPartition(pool, schema, report.name, period.start);
  const load = () =>
    withClient(pool, (client, markBroken) =>
      withPgRetry(
        () =>
          withTransaction(client, () => loadInTransaction(client, schema, input, opts, startedAt), {
            // A failed ROLLBACK means the connection is gone: destroy it, do not pool it.
            onRollbackError: markBroken,
          }),
        Array.isArray(input.rows) ? 4 : 1,
      ),
    );
  try {
    return await load();
  } catch (error) {
    if (!isMissingPartition(error)) throw error;
    // A table version made since this process remembered the month: make its partition, then retry.
    forgetLoadPartitions(schema, report.name);
    await ensureLoadPartition(pool, schema, report.name, period.start);
    if (Array.isArray(input.rows)) return load();
    throw new MissingPartitionError(
      `${report.name} ${period.start}..${period.end}: the partition of its month was missing and is made now; the pull is retried`,
      { cause: error },
    );
  }
}

async function loadInTransaction(
  client: PoolClient,
  schema: string,
  input: ParsedPeriod,
  opts: PeriodLoadOptions,
  startedAt: number,
): Promise<LoadOutcome> {
  const { report, period } = input;
  const account = input.account ?? DEFAULT_ACCOUNT;
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
  if (version.retired !== undefined)
    return refuseRetired(client, schema, input, version.retired, startedAt, opts);
  const found = (
    await client.query<Claimed>(
      named(claimPeriodSql(schema, table, account, report.name, period, input.fetchToken)),
    )
  ).rows[0];
  if (found === undefined)
    throw new Error(`the claim of ${report.name} ${period.start}..${period.end} returned no row`);
  const loadId = Number(found.next_id);
  const current = found.load_id === null ? undefined : found;
  const base = baseRecord(input);

  // Fencing: a response whose fetch started before the loaded one's must never overwrite it (the
  // claim then deleted nothing).
  if (current !== undefined && found.stale) {
    const outcome = await recordSuperseded(client, schema, input, loadId, startedAt, {
      previousLoadId: Number(current.load_id),
      error: null,
    });
    opts.logger?.info({ loadId, supersededBy: Number(current.load_id) }, 'stale response: load superseded');
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
  const inline =
    Array.isArray(input.rows) && input.rows.length <= (opts.inlineMaxRows ?? INLINE_MAX_ROWS)
      ? (input.rows as readonly ReportRow[])
      : undefined;
  const rows =
    inline === undefined
      ? await copyRows(client, target, input.rows, { format: opts.copyFormat ?? 'binary' })
      : inline.length;
  // A body's totals follow its items: with streamed rows they are known only now.
  const { totals, reconciliation } = input.summary();
  if (opts.strictReconcile === true && !reconciliation.ok)
    throw new ReconciliationError(reconciliation.differences, reconciliation.reason);
  const checked = reconciliationOf(reconciliation);
  const loadMs = performance.now() - startedAt;
  const record = insertLoadSql(schema, {
    ...base,
    ...checked,
    responseBytes: bytesOf(input),
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
        ...(await archived(schema, account, loadId, input.packed)),
      ]),
    ),
  );
  opts.logger?.info(
    { loadId, rows, reconciled: checked.reconciled, loadMs: Math.round(loadMs) },
    'period loaded',
  );
  return { loadId, status: 'loaded', rows, ...checked, loadMs, evolving };
}

/** The columns of a load's record that come from the pull itself. */
function baseRecord(input: ParsedPeriod) {
  return {
    account: input.account ?? DEFAULT_ACCOUNT,
    report: input.report.name,
    period: input.period,
    dimensions: input.report.dimensions,
    replayOf: input.replayOf ?? null,
    httpAttempts: input.attempts,
    responseBytes: 0,
    fetchMs: input.fetchMs,
    fetchedAt: input.fetchedAt,
    fetchToken: input.fetchToken,
    error: null,
    jobId: input.jobId ?? null,
  } satisfies Partial<LoadRecord>;
}

/**
 * Records the attempt as superseded (no rows, no totals written) with its body archived. The rows
 * are still read: a body that does not parse is a failed pull, superseded or not.
 */
async function recordSuperseded(
  client: PoolClient,
  schema: string,
  input: ParsedPeriod,
  loadId: number,
  startedAt: number,
  why: { previousLoadId: number | null; error: string | null },
): Promise<Omit<LoadOutcome, 'evolving'>> {
  for await (const _row of input.rows);
  const checked = reconciliationOf(input.summary().reconciliation);
  const loadMs = performance.now() - startedAt;
  const record = insertLoadSql(schema, {
    ...baseRecord(input),
    ...checked,
    responseBytes: bytesOf(input),
    loadId,
    status: 'superseded',
    rows: null,
    restatement: null,
    previousLoadId: why.previousLoadId,
    error: why.error,
    loadMs,
  });
  const account = input.account ?? DEFAULT_ACCOUNT;
  await client.query(
    named(inOneStatement([record, ...(await archived(schema, account, loadId, input.packed))])),
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
  schema: string,
  input: ParsedPeriod,
  retired: NonNullable<LoadTarget['retired']>,
  startedAt: number,
  opts: PeriodLoadOptions,
): Promise<LoadOutcome> {
  const { rows } = await client.query<{ id: string }>(
    named(`SELECT nextval(pg_get_serial_sequence($1, 'load_id'))::text AS id`, [
      qualified(schema, 'report_loads'),
    ]),
  );
  const loadId = Number(rows[0]?.id);
  const stable = reportTable(input.report.name);
  const error =
    `its dimensions (${input.report.dimensions.join(', ')}) are those of version ${retired.version} of ${stable}, ` +
    `retired since ${stable} serves ${retired.serving === null ? 'a newer version' : `version ${retired.serving}`}: ` +
    'not loaded (superseded); a pull of the current definition loads the period (adops heal finds it missing)';
  const outcome = await recordSuperseded(client, schema, input, loadId, startedAt, {
    previousLoadId: null,
    error,
  });
  opts.logger?.warn({ loadId, version: retired.version, serving: retired.serving }, `load refused: ${error}`);
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

/** The archive insert of the body, if there is one to keep. */
async function archived(
  schema: string,
  account: string,
  loadId: number,
  packed: ParsedPeriod['packed'],
): Promise<Array<{ text: string; values: unknown[] }>> {
  if (packed === undefined) return [];
  return [archiveBodySql(schema, account, loadId, await (typeof packed === 'function' ? packed() : packed))];
}

/** The body's size, once its rows have been read. */
function bytesOf(input: ParsedPeriod): number {
  return typeof input.bytes === 'function' ? input.bytes() : input.bytes;
}

/**
 * The second key of a period's load lock: the account is part of it, so one account's load never
 * waits on another's of the same period. The default account keeps the key of earlier releases,
 * so a worker of the previous release and one of this one still exclude each other during an upgrade.
 */
export function periodLockKey(account: string, period: Period): string {
  const key = `${period.start}/${period.end}`;
  return account === DEFAULT_ACCOUNT ? key : `${account}/${key}`;
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
