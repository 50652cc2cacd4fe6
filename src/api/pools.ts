import { Pool } from 'undici';

/** Pool settings; clients asking for the same origin and settings share one pool. */
export interface PoolSettings {
  readonly connections: number;
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
}

const shared = new Map<string, { pool: Pool; users: number }>();

/**
 * The process's keep-alive pool for `origin` with these settings, created on first use. Every
 * client of the same API (report pulls, catalogue sync) then reuses the same sockets; `release`
 * closes the pool when its last user lets go.
 */
export function acquirePool(origin: string, s: PoolSettings): { pool: Pool; release(): Promise<void> } {
  const key = `${origin}|${s.connections}|${s.connectTimeoutMs}|${s.headersTimeoutMs}|${s.bodyTimeoutMs}`;
  let entry = shared.get(key);
  if (entry === undefined) {
    const pool = new Pool(origin, {
      connections: s.connections,
      connectTimeout: s.connectTimeoutMs,
      headersTimeout: s.headersTimeoutMs,
      bodyTimeout: s.bodyTimeoutMs,
    });
    entry = { pool, users: 0 };
    shared.set(key, entry);
  }
  entry.users++;
  const held = entry;
  let released = false;
  return {
    pool: held.pool,
    release: async () => {
      if (released) return;
      released = true;
      held.users--;
      if (held.users > 0) return;
      if (shared.get(key) === held) shared.delete(key);
      await held.pool.close();
    },
  };
}
