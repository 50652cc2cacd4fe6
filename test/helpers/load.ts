// The loader as tests call it: a pulled period (body held or streamed) or rows in, over a pool and
// a schema, through the same steps a worker's pull takes (src/pull/run.ts).
import type { Pool } from 'pg';
import { ReportBody } from '../../src/api/body.js';
import type { ReportJob } from '../../src/platform/config/jobs.js';
import type { Period } from '../../src/flatten/types.js';
import type { Logger } from '../../src/platform/log/logger.js';
import type { PackedBody, PullStep } from '../../src/pull/sql.js';
import {
  loadPeriod,
  recordFailedPull as recordFailed,
  type FetchInfo,
  type LoadOutcome,
  type RowSource,
} from '../../src/pull/load.js';
import { warehouseOf, type CopyFormat } from '../../src/platform/pg/handle.js';
import { loadFetched, type PullOptions } from '../../src/pull/run.js';

/** A pulled period as a test hands it to the loader. */
export interface PulledPeriod {
  account?: string;
  report: ReportJob;
  period: Period;
  /** The body as received: held whole, or its chunks as they arrive (then archived in parts). */
  body: Buffer | AsyncIterable<Buffer>;
  fetchedAt: Date;
  fetchToken: number;
  attempts: number;
  bytes?: number;
  fetchMs: number;
  jobId?: string;
}

export interface LoadOptions extends PullOptions {
  readonly copyFormat?: CopyFormat;
  readonly logger?: Logger;
  readonly replayOf?: number;
}

/** Loads `pulled` as a worker's pull does once fetched (loadFetched); `opts.secrets` are redacted as the API client does. */
export function loadPulledPeriod(
  pool: Pool,
  schema: string,
  pulled: PulledPeriod,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const wh = warehouseOf(pool, schema, opts);
  return loadFetched(
    wh,
    infoOf(pulled, opts.replayOf),
    new ReportBody(pulled.body, opts.secrets ?? []),
    opts,
  );
}

/** Loads rows already made (loadPeriod), archiving `packed` if given. */
export function loadParsedPeriod(
  pool: Pool,
  schema: string,
  input: Omit<PulledPeriod, 'body' | 'report'> & {
    report: Pick<ReportJob, 'name' | 'dimensions'>;
    packed?: PackedBody;
  } & RowSource,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  return loadPeriod(
    warehouseOf(pool, schema, opts),
    { info: infoOf(input), source: input, archive: input.packed },
    opts,
  );
}

/** Records a failed pull, as a worker's pull does (its error text redacted of `secrets`). */
export function recordFailedPull(
  pool: Pool,
  schema: string,
  f: {
    account?: string;
    report: Pick<ReportJob, 'name' | 'dimensions'>;
    period: Period;
    error: Error;
    attempts: number;
    fetchToken?: number;
    /** The step that failed; default fetch. */
    step?: PullStep;
  },
  secrets: readonly string[] = [],
): Promise<number> {
  return recordFailed(warehouseOf(pool, schema), {
    info: {
      account: f.account ?? 'default',
      report: f.report,
      period: f.period,
      attempts: f.attempts,
      ...(f.fetchToken === undefined ? {} : { fetchToken: f.fetchToken }),
    },
    error: f.error,
    step: f.step ?? 'fetch',
    secrets,
  });
}

function infoOf(
  p: Omit<PulledPeriod, 'body' | 'report'> & { report: Pick<ReportJob, 'name' | 'dimensions'> },
  replayOf?: number,
): FetchInfo {
  return {
    account: p.account ?? 'default',
    report: p.report,
    period: p.period,
    fetchToken: p.fetchToken,
    fetchedAt: p.fetchedAt,
    attempts: p.attempts,
    fetchMs: p.fetchMs,
    ...(p.jobId === undefined ? {} : { jobId: p.jobId }),
    ...(replayOf === undefined ? {} : { replayOf }),
  };
}
