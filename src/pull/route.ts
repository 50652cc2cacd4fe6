// The rows of one request of several periods, each sent to its period by its `day` (which every row carries,
// at whatever level of the nesting the API put it), and counted and summed there: a period's rows and totals.
import { COUNTERS, type Dimension } from '../platform/config/dimensions.js';
import { addDays } from '../platform/dates/calendar.js';
import type { BatchedRows } from '../flatten/stream.js';
import type { Period, ReportRow, Totals } from '../flatten/types.js';
import { RowValueError, isBatched } from './encode.js';

type Rows = readonly ReportRow[] | AsyncIterable<ReportRow>;

/** Where each row of a request goes, and what each of its periods received. */
export interface Routing {
  readonly periods: readonly Period[];
  /** The index of a day's period: -1 for a day of the request this load does not write (a replay of one). */
  index(day: string): number;
  /** Counts and sums the row in its period, and returns the period's index; -1 when the row is not to be
   * written (its period is `skip`ped, or not loaded now). */
  place(row: ReportRow, skip: readonly boolean[]): number;
  rows(i: number): number;
  totals(i: number): Totals;
}

/** The routing of `request`'s rows into `periods` (oldest first), or undefined when they are one and the
 * same (a request of one period: rows go as they come, the API's totals are the period's). */
export function routing(
  request: Period,
  periods: readonly Period[],
  dims: readonly Dimension[],
): Routing | undefined {
  const [only] = periods;
  if (periods.length === 1 && only?.start === request.start && only.end === request.end) return undefined;
  const dayAt = dims.indexOf('day');
  if (dayAt < 0)
    throw new RowValueError(
      `no day dimension to tell the periods of ${request.start}..${request.end} apart`,
      'day',
      '',
    );
  const index = new Map<string, number>();
  for (let d = request.start; d <= request.end; d = addDays(d, 1)) index.set(d, -1);
  periods.forEach((p, i) => {
    for (let d = p.start; d <= p.end; d = addDays(d, 1)) index.set(d, i);
  });
  const counts = periods.map(() => 0);
  const sums = periods.map(() => COUNTERS.map(() => 0));
  return {
    periods,
    index: (day) => index.get(day) ?? -1,
    place(row, skip) {
      const day = row.dims[dayAt] ?? '';
      const i = index.get(day);
      if (i === undefined)
        throw new RowValueError(
          `day value ${JSON.stringify(day)} is outside the range ${request.start}..${request.end} that was requested`,
          'day',
          day,
        );
      if (i < 0) return -1;
      counts[i]!++;
      const sum = sums[i]!;
      for (let k = 0; k < sum.length; k++) sum[k]! += row.counters[k] ?? 0;
      return skip[i] === true ? -1 : i;
    },
    rows: (i) => counts[i] ?? 0,
    totals: (i) => Object.fromEntries(COUNTERS.map((c, k) => [c, sums[i]?.[k] ?? 0])) as Totals,
  };
}

/** The rows `keep` keeps, read as `rows` is (a batch at a time when it is batched). */
export function keptRows(rows: Rows, keep: (row: ReportRow) => boolean): Rows {
  if (Array.isArray(rows)) return rows.filter(keep);
  async function* batches(): AsyncGenerator<readonly ReportRow[]> {
    if (isBatched(rows)) for await (const batch of rows.batches()) yield batch.filter(keep);
    else for await (const row of rows) if (keep(row)) yield [row];
  }
  const kept: BatchedRows = {
    batches,
    async *[Symbol.asyncIterator]() {
      for await (const batch of batches()) yield* batch;
    },
  };
  return kept;
}
