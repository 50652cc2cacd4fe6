// What an interrupted run must still undo (databases, Redis keys, worker processes, files): each
// resource registers its undo here while it exists, and Ctrl-C runs whatever is registered.
import type { Redis } from 'ioredis';
const pending = new Set<() => Promise<void>>();

/** Registers an undo step; the returned function unregisters it (call it once undone normally). */
export function onInterrupt(undo: () => Promise<void>): () => void {
  pending.add(undo);
  return () => {
    pending.delete(undo);
  };
}

/**
 * Runs every registered undo step, last registered first (workers stop before their Redis keys go,
 * keys before the database), each at most once, failures ignored.
 */
export async function undoAll(): Promise<void> {
  const steps = [...pending].reverse();
  pending.clear();
  for (const undo of steps) await undo().catch(() => undefined);
}

/** On the first SIGINT or SIGTERM: undo everything registered, then exit 130. */
export function installInterruptHandler(say: (line: string) => void): void {
  let interrupted = false;
  const handler = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    say(`${signal}: removing the bench's databases, Redis keys, workers and files...`);
    // Dropping a database ends the sessions still open on it; their errors no longer matter.
    process.on('uncaughtException', () => undefined);
    process.on('unhandledRejection', () => undefined);
    void undoAll().finally(() => process.exit(130));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/** Deletes every Redis key matching `pattern` (the bench's own BullMQ prefix). */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
