import type { Pool, PoolClient } from 'pg';

/**
 * Runs `fn` on a client checked out of `pool`, then returns it. While checked out, pg-pool listens
 * for no 'error' on the client, so a connection lost mid-statement (server restart,
 * pg_terminate_backend) would be an uncaught 'error' event that kills the process: this listens
 * for it, lets the running statement reject instead, and destroys the client rather than pool it.
 */
export async function withClient<T>(
  pool: Pool,
  fn: (client: PoolClient, markBroken: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const markBroken = (error: Error) => {
    broken ??= error;
  };
  client.on('error', markBroken);
  try {
    return await fn(client, markBroken);
  } finally {
    client.off('error', markBroken);
    client.release(broken);
  }
}
