// What a processor throws, BullMQ stores in Redis (failedReason, stacktrace), shows on the
// dashboard and hands to `backfill --wait`. Secrets are taken out of it before it leaves.
import { redactError } from '../log/redact.js';

/**
 * `processor` whose thrown errors (and their causes) have `secrets` redacted from message and
 * stack, in place: the error keeps its class, so BullMQ still tells an UnrecoverableError, a
 * RateLimitError or a WaitingError apart.
 */
export function withRedactedErrors<A extends unknown[], R>(
  secrets: readonly string[],
  processor: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await processor(...args);
    } catch (error) {
      throw redactError(error, secrets);
    }
  };
}
