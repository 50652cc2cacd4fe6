// The warehouse's errors, each transient or terminal by its class (retry/errors.ts); a failed load
// is as retryable as what made it fail.
import { classifyFailure } from '../retry/classify.js';
import { AdopsError, TerminalError, TransientError } from '../retry/errors.js';

/**
 * A report_<name> table no longer matches its job definition. Nothing was changed; the message
 * says what differs and how to proceed (the data is never dropped for you).
 */
export class SchemaDriftError extends TerminalError {
  override readonly name = 'SchemaDriftError';
  constructor(
    message: string,
    readonly table: string,
    /** One line per difference, e.g. `column zone_id is missing`. */
    readonly differences: readonly string[],
  ) {
    super(message);
  }
}

/** A row value that cannot be written to its column; the pull fails, its raw body is kept. */
export class RowValueError extends TerminalError {
  override readonly name = 'RowValueError';
  constructor(
    message: string,
    readonly dimension: string,
    readonly value: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Loading a pulled period into Postgres failed; the period's previous rows are untouched and the
 * attempt is recorded in report_loads (status failed) when Postgres was reachable.
 */
export class LoadError extends AdopsError {
  override readonly name = 'LoadError';
  constructor(
    message: string,
    /** The report_loads row of the failed attempt, when it could be recorded. */
    loadId: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    // Retryable as its cause is: a lost connection or a deadlock is, a bad value is not.
    super(
      message,
      { ...options, ...(loadId === undefined ? {} : { loadId }) },
      classifyFailure(options.cause).kind === 'transient',
    );
  }
}

/** `adops replay` cannot replay the load it was asked for; the message says why and what to do. */
export class ReplayError extends TerminalError {
  override readonly name = 'ReplayError';
}

/**
 * A definition whose dimensions no table version has yet: it changed in the jobs folder and
 * `adops migrate` has not run since. Retryable: the pull succeeds once migrate made the version.
 */
export class UnmigratedDefinitionError extends TransientError {
  override readonly name = 'UnmigratedDefinitionError';
}

/**
 * A load reached a month whose partition was made after this process last looked (a new table
 * version). Retryable: the partition now exists, and the retry loads into it.
 */
export class MissingPartitionError extends TransientError {
  override readonly name = 'MissingPartitionError';
}
