// The shapes of a flattened report: typed rows, counters and totals, the period and the query.
import type { CounterName, Dimension } from '../platform/config/dimensions.js';
import type { Period } from '../platform/dates/periods.js';

/** One value per counter, keyed by name (reconciliation sums, a full set of totals). */
export type Counters = Record<CounterName, number>;

/**
 * The API's totals as the body gave them: a counter is null when the body did not give it. All
 * null: the body had no totals (none, null, `[]` or `{}`).
 */
export type Totals = Record<CounterName, number | null>;

export type { Period } from '../platform/dates/periods.js';

/**
 * One flattened report row.
 * `dims` holds the canonical text of each dimension value, in the order of the requested dimensions,
 * already checked against the dimension's column type (day: YYYY-MM-DD, *_id: decimal digits, tier:
 * a smallint). `counters` holds the counters in COUNTERS order, each a non-negative safe integer.
 */
export interface ReportRow {
  readonly dims: readonly string[];
  readonly counters: readonly number[];
}

/** What a report request asks for. */
export interface ReportQuery {
  readonly dimensions: readonly Dimension[];
  readonly period: Period;
}
