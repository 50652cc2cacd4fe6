// Transactions that lost a deadlock or a serialization race are run again here, on the same
// connection; what counts as such and how long to wait come from the one policy in src/retry.
import { backoffDelay, PG_BACKOFF } from '../retry/backoff.js';
import { isSerializationFailure } from '../retry/classify.js';

/**
 * Runs `attempt` again (up to `attempts` times in all) while it fails with 40001 or 40P01, after a
 * short jittered pause; any other error, or the last one, is thrown as is.
 */
export async function withPgRetry<T>(attempt: () => Promise<T>, attempts = 4): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= attempts || !isSerializationFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(n, PG_BACKOFF)));
    }
  }
}
