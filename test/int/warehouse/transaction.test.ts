// withTransaction on a real Postgres: commit, rollback, and the work's own error kept on top even
// when the connection dies and the ROLLBACK fails too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withClient, withTransaction } from '../../../src/platform/pg/handle.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  await db.pool.query('CREATE TABLE t (id int PRIMARY KEY)');
});
afterAll(async () => db?.drop());

const count = async () => Number((await db.pool.query('SELECT count(*) AS n FROM t')).rows[0].n);

describe('withTransaction', () => {
  it('commits the work and returns its result', async () => {
    const result = await withClient(db.pool, (client) =>
      withTransaction(client, async () => {
        await client.query('INSERT INTO t VALUES (1)');
        return 'done';
      }),
    );
    expect(result).toBe('done');
    expect(await count()).toBe(1);
  });

  it('rolls back everything and rethrows the work error unchanged', async () => {
    const failure = new Error('the work failed');
    await expect(
      withClient(db.pool, (client) =>
        withTransaction(client, async () => {
          await client.query('INSERT INTO t VALUES (2)');
          throw failure;
        }),
      ),
    ).rejects.toBe(failure);
    expect(await count()).toBe(1);
  });

  it('keeps the original error when the connection dies and the ROLLBACK fails too', async () => {
    const rollbackErrors: Error[] = [];
    let workError: unknown;
    const thrown = await withClient(db.pool, async (client, markBroken) => {
      const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      return withTransaction(
        client,
        async () => {
          await client.query('INSERT INTO t VALUES (3)');
          await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
          // Depending on timing, pg reports the termination or a connection no longer queryable:
          // either way this error, the work's own, is the one that must come out.
          await client.query('INSERT INTO t VALUES (4)').catch((error: unknown) => {
            workError = error;
            throw error;
          });
        },
        {
          onRollbackError: (error) => {
            rollbackErrors.push(error);
            markBroken(error);
          },
        },
      );
    }).catch((error: unknown) => error as Error);
    expect(thrown).toBeInstanceOf(Error);
    // The INSERT's own failure, not the ROLLBACK's, although the ROLLBACK failed too.
    expect(thrown).toBe(workError);
    expect(rollbackErrors).toHaveLength(1);
    expect(rollbackErrors[0]).not.toBe(workError);
    expect(await count()).toBe(1);
  });

  it('opens the transaction as asked: a read-only one refuses writes', async () => {
    await expect(
      withClient(db.pool, (client) =>
        withTransaction(client, () => client.query('INSERT INTO t VALUES (5)'), { begin: 'BEGIN READ ONLY' }),
      ),
    ).rejects.toThrow(/read-only transaction/);
    expect(await count()).toBe(1);
  });
});
