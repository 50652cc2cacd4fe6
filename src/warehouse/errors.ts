/**
 * A report_<name> table no longer matches its job definition. Nothing was changed; the message
 * says what differs and how to proceed (the data is never dropped for you).
 */
export class SchemaDriftError extends Error {
  override readonly name = 'SchemaDriftError';
  constructor(
    message: string,
    /** The table that differs. */
    readonly table: string,
    /** One line per difference, e.g. `column 3: expected campaign_id bigint, found zone_id bigint`. */
    readonly differences: readonly string[],
  ) {
    super(message);
  }
}

/** A row value that cannot be written to its column; the pull fails, its raw body is kept. */
export class RowValueError extends Error {
  override readonly name = 'RowValueError';
  /** The same body holds the same value: retrying cannot help (the queue reads this flag). */
  readonly retryable = false;
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
export class LoadError extends Error {
  override readonly name = 'LoadError';
  constructor(
    message: string,
    /** The report_loads row of the failed attempt, when it could be recorded. */
    readonly loadId: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `adops replay` cannot replay the load it was asked for; the message says why and what to do. */
export class ReplayError extends Error {
  override readonly name = 'ReplayError';
}

/**
 * A definition whose dimensions no table version has yet: it changed in the jobs folder and
 * `adops migrate` has not run since. Retryable: the pull succeeds once migrate made the version.
 */
export class UnmigratedDefinitionError extends Error {
  override readonly name = 'UnmigratedDefinitionError';
  readonly retryable = true;
}

/**
 * A load reached a month whose partition was made after this process last looked (a new table
 * version). Retryable: the partition now exists, and the retry loads into it.
 */
export class MissingPartitionError extends Error {
  override readonly name = 'MissingPartitionError';
  readonly retryable = true;
}
