// The warehouse's errors, each transient or terminal by its class (platform/retry/errors.ts); a failed load
// is as retryable as what made it fail.
import { classifyFailure } from '../retry/classify.js';
import { AdopsError, TerminalError, TransientError } from '../retry/errors.js';

/** A report table no longer matches its definition; nothing was changed, the message says how to proceed. */
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

/** A load failed; the period's previous rows are untouched, the attempt recorded when Postgres could. */
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

/** A definition whose dimensions no table version has yet: retried until `adops migrate` makes it. */
export class UnmigratedDefinitionError extends TransientError {
  override readonly name = 'UnmigratedDefinitionError';
}

/** A load met a month whose partition came after this process looked (a new version): retried. */
export class MissingPartitionError extends TransientError {
  override readonly name = 'MissingPartitionError';
}
