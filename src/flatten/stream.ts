// A report body parsed as it arrives: rows in batches as it streams, totals and reconciliation at its end.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type Dimension, COUNTERS } from '../platform/config/dimensions.js';
import { joined, readTotals, toBuffer } from './parse.js';
import { reconcileSums, sumRows, type Reconciliation } from './rows.js';
import { ReportScanner, UNIT_MARGIN } from './scan.js';
import { type Counters, type ReportRow, type Totals } from './types.js';

/** What a report says besides its rows: the API's totals and whether the rows add up to them. */
export interface ReportSummary {
  readonly totals: Totals;
  readonly reconciliation: Reconciliation;
  readonly leaves: number;
}

/** A report body read as a stream of rows, for loading without holding every row at once. */
export interface ReportStream {
  /** The rows in body order, one pass (or a batch at a time); a bad body throws part way. */
  readonly rows: BatchedRows;
  /** The totals and reconciliation; only once `rows` has been read to the end. */
  summary(): ReportSummary;
}

/** Rows that can be read one by one, or (once, instead) a batch at a time. */
export interface BatchedRows extends AsyncIterable<ReportRow> {
  batches(): AsyncIterable<readonly ReportRow[]>;
}

/** The scanner's smallest window: a few times the unit margin, so the margin is a small part of it. */
const WINDOW_BYTES = 4 * UNIT_MARGIN;

/** Streams a body into rows batch by batch, keeping running sums: memory holds a window and a batch. Rows are
 * checked as by parseReport except repeats, left to the table's unique index (earlier rows are gone). */
export function streamReport(
  body: Buffer | string | AsyncIterable<Buffer>,
  dimensions: readonly Dimension[],
  options: {
    readonly batch?: number;
    /** Window and unit margin of a chunked body (WINDOW_BYTES, UNIT_MARGIN): tests make them tiny. */
    readonly windowBytes?: number;
    readonly margin?: number;
  } = {},
): ReportStream {
  const margin = options.margin === undefined ? {} : { margin: options.margin };
  const batch = options.batch ?? 20_000;
  // BigInt accumulators: a batch's sums are exact Numbers, their total may pass 2^53.
  const sums = COUNTERS.map(() => 0n);
  let leaves = 0;
  let finished = false;
  let scanner: ReportScanner | undefined;

  // A whole body is one final window.
  const whole = typeof body === 'string' || Buffer.isBuffer(body);
  const windows: AsyncIterator<{ bytes: Buffer; final: boolean }> = windowsOf(
    whole ? [toBuffer(body)] : body,
    whole ? Infinity : (options.windowBytes ?? WINDOW_BYTES),
  )[Symbol.asyncIterator]();

  /** The rows a batch at a time; each array is reused: read it before asking for the next. */
  async function* batches(): AsyncGenerator<readonly ReportRow[]> {
    try {
      for (;;) {
        if (scanner === undefined || scanner.hungry) {
          const next = await windows.next();
          // windowsOf always ends with a final window; an exhausted one means it was fed already.
          if (next.done === true) throw new Error('streamReport: the body source ended twice');
          if (scanner === undefined)
            scanner = new ReportScanner(next.value.bytes, dimensions, { final: next.value.final, ...margin });
          else scanner.feed(next.value.bytes, next.value.final);
        }
        const done = scanner.step(batch);
        const out = scanner.rows;
        if (out.length > 0) {
          const batchSums = sumRows(out);
          COUNTERS.forEach((name, i) => (sums[i] = (sums[i] as bigint) + BigInt(batchSums[name])));
          leaves += out.length;
          yield out;
          // Forget the batch: memory holds one batch of rows, not the period.
          out.length = 0;
        }
        if (done) {
          finished = true;
          return;
        }
        if (!scanner.hungry) await yieldToEventLoop();
      }
    } finally {
      // Stopped early (a failed load): let the source go, so a response stops being read.
      if (!finished) await windows.return?.();
    }
  }

  async function* rows(): AsyncGenerator<ReportRow> {
    for await (const batch of batches()) yield* batch;
  }

  return {
    rows: { [Symbol.asyncIterator]: () => rows(), batches },
    summary: () => {
      if (!finished) throw new Error('streamReport: summary() needs the rows read to the end first');
      const totals = readTotals((scanner as ReportScanner).totals);
      const summed = {} as Counters;
      COUNTERS.forEach((name, i) => (summed[name] = Number(sums[i])));
      return { totals, reconciliation: reconcileSums(summed, totals), leaves };
    },
  };
}

/** A source's chunks gathered into windows of at least `windowBytes`, the last (maybe empty) final. */
async function* windowsOf(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  windowBytes: number,
): AsyncGenerator<{ bytes: Buffer; final: boolean }> {
  let held: Buffer[] = [];
  let size = 0;
  for await (const chunk of source) {
    held.push(chunk);
    size += chunk.length;
    if (size >= windowBytes) {
      yield { bytes: joined(held, size), final: false };
      held = [];
      size = 0;
    }
  }
  yield { bytes: joined(held, size), final: true };
}
