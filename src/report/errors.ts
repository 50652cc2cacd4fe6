import type { Dimension } from '../config/dimensions.js';
import type { CounterName } from './types.js';

/** Longest value shown in a message: enough to recognise it, short enough for one log line. */
const SHOWN = 80;

/** JSON text of a value, cut to a readable length. */
export function showValue(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

/**
 * The report body is not a report we understand: not JSON, truncated, wrongly shaped or wrongly
 * typed. Never retryable: the same body parses the same way. Keep the raw body (report_raw) and
 * correct the parser if the API's shape really is different.
 */
export class ReportFormatError extends Error {
  override readonly name = 'ReportFormatError';
  /** A re-pull returns the same body, so retrying cannot help. */
  readonly retryable = false;
  constructor(
    /** Where the offending item sits, e.g. `items["2026-01-01"]["123"].impressions`, or `(body)`. */
    readonly path: string,
    /** What is wrong there, without the path. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(
      `report body is not usable at ${path}: ${problem}; if the API really answers this shape, the parser needs ` +
        'a fix: report it with the raw body (kept in report_raw for queued pulls, --raw FILE for adops pull)',
      options,
    );
  }
}

/** A dimension value that does not fit its column type (day: date, *_id: bigint, tier: smallint, text). */
export class DimensionValueError extends Error {
  override readonly name = 'DimensionValueError';
  readonly retryable = false;
  constructor(
    readonly dimension: Dimension,
    readonly value: unknown,
    /** What the column type expects, e.g. `a date YYYY-MM-DD`. */
    readonly expected: string,
    /** Where the value sits in the body; empty when not known. */
    readonly path: string = '',
  ) {
    super(
      `dimension ${dimension}: value ${showValue(value)} is not ${expected}` +
        (path === '' ? '' : ` (at ${path})`) +
        '; if the API really sends such values, report it so the column type can be widened',
    );
  }
}

/** The items do not add up to the API's totals and the caller asked for strict reconciliation. */
export class ReconciliationError extends Error {
  override readonly name = 'ReconciliationError';
  readonly retryable = false;
  constructor(readonly differences: ReadonlyArray<{ counter: CounterName; items: number; totals: number }>) {
    super(
      `report items do not add up to its totals: ${differences
        .map((d) => `${d.counter} items=${d.items} totals=${d.totals}`)
        .join(', ')}; re-pull later (the API may still be aggregating) or run without strict reconciliation`,
    );
  }
}
