// Child of the memory section: loads one synthetic body of a given size the way a worker loads a
// big body (streamed: parsed, archived and copied as it arrives) and reports its resident set.
import { performance } from 'node:perf_hooks';
import { answerParent, memory } from '../child-process.js';
import type { ReportJob } from '../../src/platform/config/jobs.js';
import { takeFetchToken } from '../../src/pull/load.js';
import { loadPulledPeriod } from '../../test/helpers/load.js';
import { createPool } from '../../src/platform/pg/handle.js';
import { syntheticBody } from './synthetic-body.js';

export interface MemoryChildRequest {
  readonly bodyBytes: number;
  readonly databaseUrl: string;
  readonly schema: string;
  readonly report: ReportJob;
  readonly day: string;
}

export interface MemoryChildResult {
  readonly bodyBytes: number;
  readonly rows: number;
  readonly status: string;
  readonly ms: number;
  /** Resident set before the load (after a GC, pool open), and its peak over the load, bytes. */
  readonly rssBeforeBytes: number;
  readonly peakRssBytes: number;
}

async function run(req: MemoryChildRequest): Promise<MemoryChildResult> {
  const pool = createPool({ databaseUrl: req.databaseUrl }, { max: 2 });
  try {
    const fetchToken = await takeFetchToken({ pool, schema: req.schema });
    // A small load first, so modules, pool and caches are in the baseline, not the growth.
    const warm = syntheticBody(req.day, 1);
    await loadPulledPeriod(pool, req.schema, {
      report: req.report,
      period: { start: req.day, end: req.day },
      body: warm.chunks,
      fetchedAt: new Date(),
      fetchToken,
      attempts: 1,
      bytes: 0,
      fetchMs: 0,
    });
    (globalThis as { gc?: () => void }).gc?.();
    const rssBeforeBytes = memory().now;
    // VmHWM cannot be reset from inside the process: the peak so far must not exceed now.
    const body = syntheticBody(req.day, req.bodyBytes);
    const t = performance.now();
    const outcome = await loadPulledPeriod(pool, req.schema, {
      report: req.report,
      period: { start: req.day, end: req.day },
      body: body.chunks,
      fetchedAt: new Date(),
      fetchToken: await takeFetchToken({ pool, schema: req.schema }),
      attempts: 1,
      bytes: 0,
      fetchMs: 0,
    });
    const ms = performance.now() - t;
    if (outcome.rows !== body.rows) throw new Error(`loaded ${outcome.rows} rows of ${body.rows}`);
    const { rows } = await pool.query<{ bytes: string }>(
      `SELECT body_bytes AS bytes FROM "${req.schema}".report_raw WHERE load_id = $1`,
      [outcome.loadId],
    );
    return {
      bodyBytes: Number(rows[0]?.bytes ?? 0),
      rows: outcome.rows,
      status: outcome.status,
      ms,
      rssBeforeBytes,
      peakRssBytes: memory().peak,
    };
  } finally {
    await pool.end();
  }
}

answerParent(run);
