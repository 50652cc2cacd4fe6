// Why a report body cannot become rows: one class, so one `instanceof` tells a wrong body; `name` says which
// fault (it leads report_loads.error). Only a malformed body's re-pull can help, and only once.
import type { Dimension, CounterName } from '../platform/config/dimensions.js';
import { AdopsError, type FailureOptions } from '../platform/retry/errors.js';

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

export type ReportFault =
  | 'ReportFormatError'
  | 'MalformedBodyError'
  | 'DimensionShapeError'
  | 'DimensionValueError'
  | 'ReconciliationError';

/** The body is not a report we understand; not retryable (it parses the same way), unless malformed. */
export class ReportFormatError extends AdopsError {
  override name: ReportFault = 'ReportFormatError';
  constructor(
    /** Where the offending item sits, e.g. `items["2026-01-01"]["123"].impressions`, or `(body)`. */
    readonly path: string,
    /** What is wrong there, without the path. */
    readonly problem: string,
    options: FailureOptions = {},
    /** A re-pull returns the same body, so retrying cannot help (a malformed body's differs). */
    retryable = false,
    fault?: { name: ReportFault; message: string },
  ) {
    super(
      fault?.message ??
        `report body is not usable at ${path}: ${problem}; if the API really answers this shape, the parser needs ` +
          'a fix: report it with the raw body (kept in report_raw for queued pulls, --raw FILE for adops pull)',
      options,
      retryable,
    );
    if (fault !== undefined) this.name = fault.name;
  }

  /** A malformed body's error, final: the body repeats the previous answer, whose digest was `sha256`. */
  repeated(sha256: string): ReportFormatError {
    return malformedBody(this.problem, { cause: this.cause, repeatedSha256: sha256 });
  }
}

/** A key given twice in one object: JSON.parse would keep the last silently, so it is refused. */
export const DUPLICATE_KEY = 'duplicate key: it appears twice in its object';

/** Not valid JSON: transient (a proxy's page, a cut connection), retryable until it comes twice in a row. */
export function malformedBody(
  problem: string,
  options: { cause?: unknown; repeatedSha256?: string } = {},
): ReportFormatError {
  const sha = options.repeatedSha256;
  const message =
    `report body is malformed: ${problem}; ` +
    (sha === undefined
      ? 'a broken answer is usually transient: a queued pull is retried (ADOPS_PULL_ATTEMPTS) until the same body comes twice in a row, and `adops pull` can simply be run again'
      : `the same body (sha256 ${sha}) came twice in a row, so it is not going away: ` +
        'check what ADOPS_BASE_URL answers, and report it with the raw body (kept in report_raw)');
  return new ReportFormatError(
    '(body)',
    problem,
    options.cause === undefined ? {} : { cause: options.cause },
    sha === undefined,
    { name: 'MalformedBodyError', message },
  );
}

export function isMalformedBody(error: unknown): error is ReportFormatError {
  return error instanceof ReportFormatError && error.name === 'MalformedBodyError';
}

/** A dimension value that does not fit its column type (day: date, *_id: bigint, tier: smallint, text). */
export function dimensionValueError(
  dimension: Dimension,
  value: unknown,
  /** What the column type expects, e.g. `a date YYYY-MM-DD`. */
  expected: string,
  /** Where the value sits in the body; empty when not known. */
  path = '',
): ReportFormatError {
  const message =
    `dimension ${dimension}: value ${showValue(value)} is not ${expected}` +
    (path === '' ? '' : ` (at ${path})`) +
    '; if the API really sends such values, report it so the column type can be widened';
  return new ReportFormatError(path, `value ${showValue(value)} is not ${expected}`, {}, false, {
    name: 'DimensionValueError',
    message,
  });
}

/** The body is nested by other dimensions than asked, usually a server reading another request form. */
export function dimensionShapeError(
  path: string,
  problem: string,
  dimensions: readonly Dimension[],
): ReportFormatError {
  const message =
    `report body is not usable at ${path}: ${problem}; the body's shape does not match the dimensions asked ` +
    `(${dimensions.join(', ')}): most likely the server reads another request form than the one sent ` +
    "(ADOPS_REPORT_PARAMS, or the account's report_params), so it answered other dimensions; " +
    '`adops doctor` finds the form it reads';
  return new ReportFormatError(path, problem, {}, false, { name: 'DimensionShapeError', message });
}

export type UnreconciledReason = 'mismatch' | 'no totals' | 'partial totals';

/** The rows could not be reconciled with the totals, and the caller asked for strict reconciliation. */
export function reconciliationError(
  differences: ReadonlyArray<{ counter: CounterName; items: number; totals: number }>,
  reason: UnreconciledReason = 'mismatch',
): ReportFormatError {
  const listed = differences.map((d) => `${d.counter} items=${d.items} totals=${d.totals}`).join(', ');
  const message =
    reason === 'no totals'
      ? 'the report has no totals, so its rows cannot be checked against them; run without strict reconciliation to load such reports (they show as unreconciled, "no totals")'
      : reason === 'partial totals'
        ? `the report's totals lack some counters, so its rows cannot be fully checked${listed === '' ? '' : ` (and differ: ${listed})`}; run without strict reconciliation to load it`
        : `report items do not add up to its totals: ${listed}; re-pull later (the API may still be aggregating) or run without strict reconciliation`;
  return new ReportFormatError('totals', reason, {}, false, { name: 'ReconciliationError', message });
}
