// The one way the warehouse runs a transaction: BEGIN, the work, COMMIT; on any error ROLLBACK and
// rethrow the work's own error, never one from the ROLLBACK that would hide it.
import type { ClientBase } from 'pg';

export interface TransactionOptions {
  /** The opening statement, e.g. 'BEGIN READ ONLY' (default 'BEGIN'). */
  readonly begin?: string;
  /**
   * Told when the ROLLBACK itself failed: the connection is then unusable, and a pooled client
   * must be destroyed rather than reused (pass withClient's markBroken).
   */
  readonly onRollbackError?: (error: Error) => void;
}

/**
 * Runs `work` inside a transaction on `client` and commits it. When `work` (or the COMMIT) throws,
 * rolls back and rethrows that error; a failing ROLLBACK (a dropped connection) is reported to
 * `onRollbackError` and otherwise swallowed, so the cause the user needs stays on top.
 */
export async function withTransaction<T>(
  client: ClientBase,
  work: () => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  await client.query(options.begin ?? 'BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      options.onRollbackError?.(
        rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)),
      );
    });
    throw error;
  }
}
