// The order of a worker's stop: stop taking jobs, let running ones finish until the deadline,
// then cut their API requests short, and only then abandon what still runs to the stall check.
import type { Worker } from 'bullmq';
import type { Logger } from '../log/logger.js';

/** Resolves `true` when `p` settles within `ms`, `false` otherwise (never rejects). */
export function within(
  p: Promise<unknown>,
  ms: number,
  early?: (giveUp: () => void) => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    early?.(() => {
      clearTimeout(timer);
      resolve(false);
    });
    p.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}

/**
 * Stops `workers`: graceful until `timeoutMs` (or until `onGiveUp`'s callback is called, a second
 * signal), then `abort()` (running requests end, their pulls go back to wait) with 5 s more, then a
 * forced close. Resolves whether the stop was graceful.
 */
export async function stopWorkers(
  workers: readonly Worker[],
  timeoutMs: number,
  abort: () => void,
  logger: Logger,
  onGiveUp?: (giveUp: () => void) => void,
): Promise<boolean> {
  const graceful = Promise.all(workers.map((w) => w.close()));
  const finished = await within(graceful, timeoutMs, onGiveUp);
  if (finished) return true;
  logger.warn('shutdown deadline: aborting running API requests; their pulls go back to the queue');
  abort();
  if (await within(graceful, 5_000)) return false;
  logger.warn('running jobs still busy: abandoning them to the stall check of other workers');
  await within(Promise.allSettled(workers.map((w) => w.close(true))), 5_000);
  return false;
}
