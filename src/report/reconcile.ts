import { COUNTERS, type CounterName, type Counters, type ReportRow } from './types.js';

/** Outcome of comparing the rows' sums with the API's totals, counter by counter. */
export interface Reconciliation {
  readonly ok: boolean;
  /** One entry per counter whose sum over the rows differs from the totals; empty when ok. */
  readonly differences: Array<{ counter: CounterName; items: number; totals: number }>;
}

/** Sums each counter over the rows (exact: falls back to BigInt if a sum passes 2^53). */
export function sumRows(rows: readonly ReportRow[]): Counters {
  const sums = [0, 0, 0, 0, 0];
  for (let r = 0; r < rows.length; r++) {
    const c = (rows[r] as ReportRow).counters;
    sums[0]! += c[0]!;
    sums[1]! += c[1]!;
    sums[2]! += c[2]!;
    sums[3]! += c[3]!;
    sums[4]! += c[4]!;
  }
  const out = {} as Counters;
  COUNTERS.forEach((name, i) => {
    const s = sums[i]!;
    // Number addition is exact below 2^53; above it, redo this counter in BigInt and report
    // the nearest Number, which is what a comparison with JSON totals can see anyway.
    out[name] = Number.isSafeInteger(s)
      ? s
      : Number(rows.reduce((acc, row) => acc + BigInt(row.counters[i]!), 0n));
  });
  return out;
}

/** Compares the sums of the rows with the totals; per counter, any difference is reported. */
export function reconcile(rows: readonly ReportRow[], totals: Counters): Reconciliation {
  return reconcileSums(sumRows(rows), totals);
}

/** Compares counter sums (however they were taken) with the totals. */
export function reconcileSums(sums: Counters, totals: Counters): Reconciliation {
  const differences = COUNTERS.filter((c) => sums[c] !== totals[c]).map((counter) => ({
    counter,
    items: sums[counter],
    totals: totals[counter],
  }));
  return { ok: differences.length === 0, differences };
}
