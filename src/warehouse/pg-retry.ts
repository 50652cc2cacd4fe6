/** Postgres errors worth retrying whole: a serialization failure or a deadlock victim. */
const RETRYABLE = new Set(['40001', '40P01']);

/** True for a Postgres serialization failure (40001) or deadlock (40P01). */
export function isRetryablePgError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/**
 * Runs `attempt` again (up to `attempts` times in all) while it fails with 40001 or 40P01, after a
 * short jittered pause; any other error, or the last one, is thrown as is.
 */
export async function withPgRetry<T>(attempt: () => Promise<T>, attempts = 4): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= attempts || !isRetryablePgError(error)) throw error;
      // Jitter so that two transactions that deadlocked do not collide again in step.
      const pause = Math.min(1000, 50 * 2 ** n) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
