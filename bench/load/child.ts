// Child process of the load-path bench: runs only our loader on a saved body, so its peak RSS is
// the loader's (not the harness' or the emulator's). Talks to the parent over IPC.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { answerParent, memory } from '../child-process.js';
import type { ReportJob } from '../../src/platform/config/jobs.js';
import { parseReportAsync } from '../../test/helpers/flatten.js';
import type { Period } from '../../src/flatten/types.js';
import { copyChunks, createRowEncoder } from '../../src/pull/encode.js';
import { loadParsedPeriod, loadPulledPeriod } from '../../test/helpers/load.js';
import { createPool } from '../../src/platform/pg/handle.js';
import { packBody } from '../../src/pull/archive.js';
import { takeFetchToken } from '../../src/pull/load.js';

/** What the parent asks for. */
export interface LoadChildRequest {
  readonly mode: 'load' | 'phases';
  readonly bodyFile: string;
  readonly databaseUrl: string;
  readonly schema: string;
  readonly report: ReportJob;
  readonly period: Period;
}

/** What the child answers. */
export interface LoadChildResult {
  readonly rows: number;
  readonly status: string;
  readonly reconciled: boolean;
  /** Wall time of loadPulledPeriod (mode load), or of the phases together (mode phases). */
  readonly ms: number;
  /** Per phase, ms (mode phases only). */
  readonly phases: Record<string, number>;
  /** Peak resident set of this process (VmHWM), bytes. */
  readonly peakRssBytes: number;
  /** Resident set after the body was read and before the load began, bytes. */
  readonly rssBeforeBytes: number;
}

async function run(req: LoadChildRequest): Promise<LoadChildResult> {
  if (req.mode === 'load') return streamedLoad(req);
  const body = await readFile(req.bodyFile);
  (globalThis as { gc?: () => void }).gc?.();
  const rssBeforeBytes = memory().now;
  const pool = createPool({ databaseUrl: req.databaseUrl }, { max: 2 });
  const pulled = {
    report: req.report,
    period: req.period,
    body,
    fetchedAt: new Date(),
    fetchToken: await takeFetchToken({ pool, schema: req.schema }),
    attempts: 1,
    bytes: body.length,
    fetchMs: 0,
  };
  try {
    const phases: Record<string, number> = {};
    const timed = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
      const t = performance.now();
      const value = await fn();
      phases[name] = performance.now() - t;
      return value;
    };
    const packed = await timed('packBody: gzip + sha256 (before parsing)', () => packBody(body));
    const parsed = await timed('parseReportAsync: scan + typed rows + reconcile', () =>
      parseReportAsync(body, req.report.dimensions),
    );
    await timed('COPY text encoding alone (no database)', async () => {
      const encode = createRowEncoder({
        periodStart: req.period.start,
        periodEnd: req.period.end,
        dimensions: req.report.dimensions,
        loadId: 1,
        account: 'default',
      });
      const counter = { rows: 0 };
      for await (const chunk of copyChunks(parsed.rows, encode, counter)) void chunk;
    });
    const outcome = await timed('loadParsedPeriod: DELETE + COPY + totals + audit + archive', () =>
      loadParsedPeriod(pool, req.schema, {
        report: req.report,
        period: req.period,
        rows: parsed.rows,
        summary: () => ({ totals: parsed.totals, reconciliation: parsed.reconciliation }),
        packed,
        fetchedAt: pulled.fetchedAt,
        fetchToken: pulled.fetchToken,
        attempts: 1,
        bytes: body.length,
        fetchMs: 0,
      }),
    );
    return {
      rows: outcome.rows,
      status: outcome.status,
      reconciled: outcome.reconciled,
      ms: Object.values(phases).reduce((a, b) => a + b, 0),
      phases,
      peakRssBytes: memory().peak,
      rssBeforeBytes,
    };
  } finally {
    await pool.end();
  }
}

/**
 * The worker's path for a body of this size (past ADOPS_STREAM_BODY_MB): the body read from the
 * file as it would arrive from the socket, parsed, archived and copied as it streams in.
 */
async function streamedLoad(req: LoadChildRequest): Promise<LoadChildResult> {
  (globalThis as { gc?: () => void }).gc?.();
  const rssBeforeBytes = memory().now;
  const pool = createPool({ databaseUrl: req.databaseUrl }, { max: 2 });
  try {
    const fetchToken = await takeFetchToken({ pool, schema: req.schema });
    const t = performance.now();
    const outcome = await loadPulledPeriod(pool, req.schema, {
      report: req.report,
      period: req.period,
      body: createReadStream(req.bodyFile, { highWaterMark: 256 * 1024 }),
      fetchedAt: new Date(),
      fetchToken,
      attempts: 1,
      bytes: 0,
      fetchMs: 0,
    });
    const ms = performance.now() - t;
    return {
      rows: outcome.rows,
      status: outcome.status,
      reconciled: outcome.reconciled,
      ms,
      phases: {},
      peakRssBytes: memory().peak,
      rssBeforeBytes,
    };
  } finally {
    await pool.end();
  }
}

answerParent(run);
