import { describe, expect, it } from 'vitest';
import { withPgRetry } from '../../../src/platform/pg/handle.js';

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });

describe('withPgRetry', () => {
  it('runs a transaction again after a deadlock or serialization failure', async () => {
    const failures = [pgError('40P01'), pgError('40001')];
    let calls = 0;
    const result = await withPgRetry(async () => {
      calls++;
      const next = failures.shift();
      if (next !== undefined) throw next;
      return 'done';
    });
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('does not retry any other error', async () => {
    let calls = 0;
    await expect(
      withPgRetry(async () => {
        calls++;
        throw pgError('23505');
      }),
    ).rejects.toThrow('pg 23505');
    expect(calls).toBe(1);
  });

  it('gives up after the allowed attempts with the last error', async () => {
    let calls = 0;
    await expect(
      withPgRetry(async () => {
        calls++;
        throw pgError('40001');
      }, 2),
    ).rejects.toThrow('pg 40001');
    expect(calls).toBe(2);
  });
});
