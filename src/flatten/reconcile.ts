import type { UnreconciledReason } from './errors.js';
import { COUNTERS, type CounterName, type Counters, type ReportRow, type Totals } from './types.js';

/** Outcome of comparing the rows' sums with the API's totals, counter by counter. */
export interface Reconciliation {
  readonly ok: boolean;
  /** One entry per given counter whose sum over the rows differs from the totals; empty when ok. */
  readonly differences: Array<{ counter: CounterName; items: number; totals: number }>;
  /**
   * Why not ok: 'mismatch' (differences), 'no totals' (the body gave none: nothing was checked),
   * 'partial totals' (some counters missing: only the given ones were checked). Absent when ok.
   */
  readonly reason?: UnreconciledReason;
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
export function reconcile(rows: readonly ReportRow[], totals: Totals): Reconciliation {
  return reconcileSums(sumRows(rows), totals);
}

/**
 * Compares counter sums (however they were taken) with the totals given. A report without totals,
 * or with only some counters, is never called reconciled: nothing (or not everything) was checked.
 */
export function reconcileSums(sums: Counters, totals: Totals): Reconciliation {
  const given = COUNTERS.filter((c) => totals[c] !== null);
  if (given.length === 0) return { ok: false, differences: [], reason: 'no totals' };
  const differences = given
    .filter((c) => sums[c] !== totals[c])
    .map((counter) => ({ counter, items: sums[counter], totals: totals[counter] as number }));
  if (given.length < COUNTERS.length) return { ok: false, differences, reason: 'partial totals' };
  return differences.length === 0
    ? { ok: true, differences }
    : { ok: false, differences, reason: 'mismatch' };
}
