// Every error we throw is transient (a later try can succeed: the queue retries it) or terminal (the queue
// fails it for good), and says so by its class: the classifier decides with `instanceof`.

/** What any of our errors may carry besides its message. */
export interface FailureOptions {
  readonly cause?: unknown; // The error that caused this one (kept as `cause`, shown by failureReason).
  readonly attempts?: number; // HTTP attempts made before giving up, when the failure came from the API.
  readonly loadId?: number; // The report_loads row recording the failure, when the loader recorded one.
  readonly hint?: string; // What the user can do about it, shown after the message when the message lacks it.
  /** The server said when to come back (a 429's Retry-After): a pause, not a failure. */
  readonly retryAfterMs?: number;
}

/** The common base. TransientError and TerminalError fix `retryable` by class; only errors retryable
 * per instance (an API error by status, a failed load by its cause) extend this directly. */
export abstract class AdopsError extends Error {
  readonly attempts: number | undefined;
  /** Set once by withLoadId when the failure was recorded after the error was made. */
  loadId: number | undefined;
  readonly hint: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly retryable: boolean; // True when a later try can succeed: the classifier's answer for this error.

  protected constructor(message: string, options: FailureOptions, retryable: boolean) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.attempts = options.attempts;
    this.loadId = options.loadId;
    this.hint = options.hint;
    this.retryAfterMs = options.retryAfterMs;
    this.retryable = retryable;
  }

  /** The same error, recorded as report_loads row `loadId`. */
  withLoadId(loadId: number | undefined): this {
    if (loadId !== undefined) this.loadId = loadId;
    return this;
  }
}

/** A failure a later try can get past (a 5xx, a reset, a deadlock, a server restarting). */
export class TransientError extends AdopsError {
  override name = 'TransientError';
  constructor(message: string, options: FailureOptions = {}) {
    super(message, options, true);
  }
}

/** A failure no retry can fix (a 4xx, a body of the wrong shape, a setting that is wrong). */
export class TerminalError extends AdopsError {
  override name = 'TerminalError';
  constructor(message: string, options: FailureOptions = {}) {
    super(message, options, false);
  }
}
