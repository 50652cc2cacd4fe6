import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Dimension } from '../config/dimensions.js';
import { readTotals, toBuffer } from './parse.js';
import { reconcileSums, sumRows, type Reconciliation } from './reconcile.js';
import { ReportScanner } from './scan.js';
import { COUNTERS, type Counters, type ReportRow, type Totals } from './types.js';

/** What a report says besides its rows: the API's totals and whether the rows add up to them. */
export interface ReportSummary {
  readonly totals: Totals;
  readonly reconciliation: Reconciliation;
  readonly leaves: number;
}

/** A report body read as a stream of rows, for loading without holding every row at once. */
export interface ReportStream {
  /** The rows in body order, one pass; a bad body throws part way (ReportFormatError, ...). */
  readonly rows: AsyncIterable<ReportRow>;
  /** The totals and reconciliation; only once `rows` has been read to the end. */
  summary(): ReportSummary;
}

/**
 * Streams a GET /reports body into rows batch by batch (about `batch` leaves each, yielding to
 * the event loop between batches), keeping only the running sums. Rows are validated exactly as
 * parseReport validates them, except that two rows with the same dimension values are left to the
 * report table's unique index, since the earlier rows are gone by the time a repeat appears.
 */
export function streamReport(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: { readonly batch?: number } = {},
): ReportStream {
  const scanner = new ReportScanner(toBuffer(body), dimensions);
  const batch = options.batch ?? 20_000;
  // BigInt accumulators: a batch's sums are exact Numbers, their total may pass 2^53.
  const sums = COUNTERS.map(() => 0n);
  let leaves = 0;
  let finished = false;

  async function* rows(): AsyncGenerator<ReportRow> {
    for (;;) {
      const done = scanner.step(batch);
      const out = scanner.rows;
      const batchSums = sumRows(out);
      COUNTERS.forEach((name, i) => (sums[i] = (sums[i] as bigint) + BigInt(batchSums[name])));
      leaves += out.length;
      yield* out;
      // Forget the batch: memory holds one batch of rows, not the period.
      out.length = 0;
      if (done) {
        finished = true;
        return;
      }
      await yieldToEventLoop();
    }
  }

  return {
    rows: rows(),
    summary: () => {
      if (!finished) throw new Error('streamReport: summary() needs the rows read to the end first');
      const totals = readTotals(scanner.totals);
      const summed = {} as Counters;
      COUNTERS.forEach((name, i) => (summed[name] = Number(sums[i])));
      return { totals, reconciliation: reconcileSums(summed, totals), leaves };
    },
  };
}
