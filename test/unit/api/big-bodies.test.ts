import { describe, expect, it } from 'vitest';
import { BigBodyGate } from '../../../src/api/big-bodies.js';

describe('BigBodyGate', () => {
  it('lets `slots` holds in and queues the next, in order, until one is released', async () => {
    const gate = new BigBodyGate(10, 1);
    const [a, b, c] = [gate.hold(), gate.hold(), gate.hold()];
    await a.wait();
    const entered: string[] = [];
    const waits = [b.wait().then(() => entered.push('b')), c.wait().then(() => entered.push('c'))];
    await Promise.resolve();
    expect(entered).toEqual([]);
    a.release();
    await waits[0];
    expect(entered).toEqual(['b']);
    expect(gate.holding).toBe(1);
    b.release();
    b.release(); // idempotent: frees one slot, not two
    await waits[1];
    expect(entered).toEqual(['b', 'c']);
    c.release();
    expect(gate.holding).toBe(0);
  });

  it('gives up a wait when its signal aborts, and a hold released unheld frees nothing', async () => {
    const gate = new BigBodyGate(10, 1);
    const first = gate.hold();
    await first.wait();
    const ac = new AbortController();
    const second = gate.hold(ac.signal);
    const waiting = second.wait();
    ac.abort(new Error('shutdown'));
    await expect(waiting).rejects.toThrow('shutdown');
    second.release();
    expect(gate.holding).toBe(1);
    const third = gate.hold();
    first.release();
    await third.wait();
    expect(gate.holding).toBe(1);
    third.release();
    expect(gate.holding).toBe(0);
  });

  it('hands on a slot that arrives after its hold was released', async () => {
    const gate = new BigBodyGate(10, 1);
    const first = gate.hold();
    await first.wait();
    const late = gate.hold();
    const waiting = late.wait();
    late.release();
    first.release();
    await waiting;
    expect(gate.holding).toBe(0);
  });
});
