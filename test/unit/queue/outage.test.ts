// The wait's ride through an outage of the queue's store (throughOutage): retry reads while it is
// away, give up at the bound naming the store with the last failure, never retry what waiting cannot fix.
import { describe, expect, it } from 'vitest';
import { outageReason } from '../../../src/platform/retry/classify.js';
import { QueueOutageError, throughOutage, type OutageState } from '../../../src/platform/queue/connection.js';

const offline = () => new Error("Stream isn't writeable and enableOfflineQueue options is false");

/** A read that fails with `failures` errors, one per call, then answers `value`. */
function flaky<T>(failures: readonly Error[], value: T): { read: () => Promise<T>; calls: () => number } {
  let n = 0;
  return {
    read: () => {
      const error = failures[n++];
      return error === undefined ? Promise.resolve(value) : Promise.reject(error);
    },
    calls: () => n,
  };
}

describe('throughOutage', () => {
  it('retries a read while Redis is away and answers once it is back, telling when it went and came back', async () => {
    const states: OutageState[] = [];
    const r = flaky([offline(), new Error('Connection is closed.'), offline()], 'completed');
    const value = await throughOutage(r.read, {
      outageMs: 5_000,
      retryMs: 10,
      onOutage: (s) => states.push(s),
    });
    expect(value).toBe('completed');
    expect(r.calls()).toBe(4);
    expect(states.map((s) => s.away)).toEqual([true, true, true, false]);
  });

  it('gives up once the store has been away for the bound, naming it, with the last failure as the cause', async () => {
    const started = Date.now();
    const error = await throughOutage(() => Promise.reject(offline()), {
      outageMs: 200,
      retryMs: 20,
      store: 'Redis at redis://127.0.0.1:6379',
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QueueOutageError);
    expect((error as QueueOutageError).awayMs).toBeGreaterThanOrEqual(200);
    expect((error as QueueOutageError).message).toBe(
      'Redis at redis://127.0.0.1:6379 did not answer for 0 s (no connection)',
    );
    expect(((error as Error).cause as Error).message).toMatch(/Stream isn't writeable/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("rides out the queue's Postgres restarting, and names it when it gives up", async () => {
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const starting = Object.assign(new Error('the database system is starting up'), { code: '57P03' });
    const r = flaky([shutdown, new Error('Connection terminated unexpectedly'), starting], 'completed');
    expect(await throughOutage(r.read, { outageMs: 5_000, retryMs: 10 })).toBe('completed');
    expect(r.calls()).toBe(4);
    const error = await throughOutage(() => Promise.reject(shutdown), {
      outageMs: 50,
      retryMs: 10,
      store: "the queue's Postgres (schema adops_queue)",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueOutageError);
    expect((error as Error).message).toMatch(
      /^the queue's Postgres \(schema adops_queue\) did not answer for 0 s \(terminating connection/,
    );
    expect((error as Error).message).not.toMatch(/Redis/);
  });

  it('throws what waiting cannot fix at once, unretried', async () => {
    const wrong = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      name: 'ReplyError',
    });
    const r = flaky([wrong], 'never');
    await expect(throughOutage(r.read, { outageMs: 5_000, retryMs: 10 })).rejects.toBe(wrong);
    expect(r.calls()).toBe(1);
  });

  it('counts a read with no answer in time as an outage: a Redis frozen with its connection open', async () => {
    let n = 0;
    const read = () => (n++ === 0 ? new Promise<string>(() => undefined) : Promise.resolve('back'));
    const states: OutageState[] = [];
    const value = await throughOutage(read, {
      outageMs: 5_000,
      retryMs: 10,
      answerMs: 50,
      onOutage: (s) => states.push(s),
    });
    expect(value).toBe('back');
    expect(states[0]).toMatchObject({ away: true, error: { message: 'no answer within 0 s' } });
  });

  it('stops retrying when its signal aborts, resolving undefined', async () => {
    const controller = new AbortController();
    const waiting = throughOutage(() => Promise.reject(offline()), {
      outageMs: 60_000,
      retryMs: 30_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    expect(await waiting).toBeUndefined();
  });
});

describe('outageReason', () => {
  it("says 'no connection' for ioredis' refusals of a command while its connection is down, and keeps other messages", () => {
    expect(outageReason(offline())).toBe('no connection');
    expect(outageReason(new Error('Connection is closed.'))).toBe('no connection');
    expect(outageReason(new Error('connect ECONNREFUSED 127.0.0.1:6379'))).toBe(
      'connect ECONNREFUSED 127.0.0.1:6379',
    );
  });
});
