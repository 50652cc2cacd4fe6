// A what-if, not our loader: the same work as loadPulledPeriod, rearranged to overlap. gzip runs on
// the thread pool while the main thread runs JSON.parse, and rows stream into the loader's own COPY
// transaction (loadParsedPeriod) batch by batch as they are flattened, then are dropped, so Postgres
// ingests while Node still flattens. It measures what the changes proposed in BENCHMARKS.md would
// gain; the worker never runs this file.
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import type { ReportJob } from '../../src/config/jobs.js';
import { Flattener } from '../../src/report/flatten.js';
import { COUNTERS, type Counters, type Period, type ReportRow } from '../../src/report/types.js';
import { loadParsedPeriod } from '../../src/warehouse/load-period.js';
import { packBody } from '../../src/warehouse/raw.js';

/** Rows flattened per batch handed to COPY. */
const BATCH = 20_000;

/**
 * Loads `body` into report_<report.name> the overlapped way and returns its wall time and whether
 * the streamed rows summed to the totals (checked after the COPY, since they are streamed).
 */
export async function overlappedLoad(
  pool: Pool,
  schema: string,
  report: ReportJob,
  period: Period,
  body: Buffer,
): Promise<{ ms: number; rows: number; reconciled: boolean }> {
  const started = performance.now();
  const packing = packBody(body);
  const doc = JSON.parse(body.toString('utf8')) as { items: unknown; totals: Counters };
  const flattener = new Flattener(report.dimensions, doc.items);
  const sums = [0, 0, 0, 0, 0];
  // Hands out each batch, then forgets it: memory holds one batch of rows, not the period.
  async function* batches(): AsyncGenerator<ReportRow> {
    for (;;) {
      const done = flattener.step(BATCH);
      const rows = flattener.rows;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i] as ReportRow;
        for (let c = 0; c < 5; c++) sums[c]! += row.counters[c]!;
        yield row;
      }
      rows.length = 0;
      if (done) return;
    }
  }
  const outcome = await loadParsedPeriod(pool, schema, {
    report,
    period,
    rows: batches(),
    totals: doc.totals,
    // Known only once the rows have streamed: a real change computes it after the COPY.
    reconciliation: { ok: true, differences: [] },
    packed: await packing,
    fetchedAt: new Date(),
    attempts: 1,
    bytes: body.length,
    fetchMs: 0,
  });
  const reconciled = COUNTERS.every((name, i) => doc.totals[name] === sums[i]);
  return { ms: performance.now() - started, rows: outcome.rows, reconciled };
}
