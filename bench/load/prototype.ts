// A what-if, not our loader: the same work as loadPulledPeriod, rearranged to overlap. gzip runs on
// the thread pool while the main thread scans, and rows stream into the loader's own COPY
// transaction (loadParsedPeriod) batch by batch as the scanner (the parser's own ReportScanner)
// produces them, then are dropped, so Postgres ingests while Node still parses. It measures what
// the change proposed in BENCHMARKS.md would gain; the worker never runs this file.
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import type { ReportJob } from '../../src/config/jobs.js';
import { parseReportAsync } from '../../src/report/parse.js';
import { ReportScanner } from '../../src/report/scan.js';
import { COUNTERS, type Counters, type Period, type ReportRow } from '../../src/report/types.js';
import { loadParsedPeriod } from '../../src/warehouse/load-period.js';
import { packBody, type PackedBody } from '../../src/warehouse/raw.js';

/** Scanner work units (about one per container) per batch of rows handed to COPY. */
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
  const scanner = new ReportScanner(body, report.dimensions);
  const sums = [0, 0, 0, 0, 0];
  // The totals follow the items in the body, so they are known only once the rows have streamed;
  // loadParsedPeriod reads them only after the COPY, by when this object is filled.
  const totals = {} as Counters;
  const packed = {} as PackedBody;
  // Hands out each batch, then forgets it: memory holds one batch of rows, not the period.
  async function* batches(): AsyncGenerator<ReportRow> {
    for (;;) {
      const done = scanner.step(BATCH);
      const rows = scanner.rows;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i] as ReportRow;
        for (let c = 0; c < 5; c++) sums[c]! += row.counters[c]!;
        yield row;
      }
      rows.length = 0;
      if (done) {
        Object.assign(totals, scanner.totals);
        // gzip ran on the thread pool all along; the archive is written after the COPY.
        Object.assign(packed, await packing);
        return;
      }
    }
  }
  const outcome = await loadParsedPeriod(pool, schema, {
    report,
    period,
    rows: batches(),
    summary: () => ({ totals, reconciliation: { ok: true, differences: [] } }),
    packed,
    fetchedAt: new Date(),
    attempts: 1,
    bytes: body.length,
    fetchMs: 0,
  });
  const reconciled = COUNTERS.every((name, i) => totals[name] === sums[i]);
  return { ms: performance.now() - started, rows: outcome.rows, reconciled };
}

/**
 * The smaller half of the change alone: loadPulledPeriod with packBody started beside the parse
 * instead of before it, rows still collected first. Returns the wall time.
 */
export async function packBesideParseLoad(
  pool: Pool,
  schema: string,
  report: ReportJob,
  period: Period,
  body: Buffer,
): Promise<{ ms: number; rows: number; reconciled: boolean }> {
  const started = performance.now();
  const packing = packBody(body);
  const parsed = await parseReportAsync(body, report.dimensions);
  const outcome = await loadParsedPeriod(pool, schema, {
    report,
    period,
    rows: parsed.rows,
    summary: () => ({ totals: parsed.totals, reconciliation: parsed.reconciliation }),
    packed: await packing,
    fetchedAt: new Date(),
    attempts: 1,
    bytes: body.length,
    fetchMs: 0,
  });
  return { ms: performance.now() - started, rows: outcome.rows, reconciled: outcome.reconciled };
}
