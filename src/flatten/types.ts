// The shapes of a flattened report: typed rows, counters and totals, the period and the query.
import type { CounterName, Dimension } from '../platform/config/dimensions.js';
import type { Period } from '../platform/dates/periods.js';

/** One value per counter, keyed by name (reconciliation sums, a full set of totals). */
export type Counters = Record<CounterName, number>;

/** The API's totals as given: a counter is null when absent; all null when the body had no totals. */
export type Totals = Record<CounterName, number | null>;

export type { Period } from '../platform/dates/periods.js';

/** One report row: `dims` the canonical text of each value in the requested order, checked against its column
 * type; `counters` in COUNTERS order, each a non-negative safe integer. */
export interface ReportRow {
  readonly dims: readonly string[];
  readonly counters: readonly number[];
}

export interface ReportQuery {
  readonly dimensions: readonly Dimension[];
  readonly period: Period;
}
