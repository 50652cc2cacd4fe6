/**
 * A configuration problem: a bad env var, flag or job file. The CLI prints `message` as one line
 * and exits with code 2.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** What was wrong: the env var, `file: field`, or the flag. */
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
