// The per-process bound on big report bodies, over HTTP: a second body that grows past the
// threshold waits, unread, until the first one is released; small ones never wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BigBodyGate } from '../../../src/api/big-bodies.js';
import { createApiClient, type ApiClient } from '../../../src/api/index.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import type { Dimension } from '../../../src/config/dimensions.js';

const dimensions: Dimension[] = ['day', 'campaign_id', 'creative_id', 'zone_id', 'country'];
const query = (day: string) => ({ dimensions, period: { start: day, end: day } });
let emulator: RunningEmulator;
let api: ApiClient;

beforeAll(async () => {
  // A few MB per day with these dimensions.
  emulator = await startEmulator({ seed: 4, cellsPerDay: 30_000, lateDataDays: 0 });
  api = createApiClient({
    baseUrl: emulator.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    attempts: 1,
    compression: 'none',
  });
});
afterAll(async () => {
  await api?.close();
  await emulator?.close();
});

/** Whether `p` is still pending after `ms` (its outcome is not consumed). */
async function pendingAfter(p: Promise<unknown>, ms: number): Promise<boolean> {
  const tick = Symbol('pending');
  const first = await Promise.race([
    p.then(() => undefined),
    new Promise((r) => setTimeout(() => r(tick), ms)),
  ]);
  return first === tick;
}

describe('BigBodyGate over HTTP', () => {
  it('lets one big body in at a time: the second finishes reading only once the first is released', async () => {
    const gate = new BigBodyGate(1_000_000);
    const holds = [gate.hold(), gate.hold()];
    const reads = ['2026-03-01', '2026-03-02'].map((day, i) =>
      api.fetchReport(query(day), { bigBody: holds[i] }).then((r) => ({ i, r })),
    );
    const first = await Promise.race(reads);
    expect(first.r.body.length).toBeGreaterThan(1_000_000);
    expect(gate.holding).toBe(1);
    const other = reads[1 - first.i] as Promise<unknown>;
    expect(await pendingAfter(other, 300)).toBe(true);
    holds[first.i]?.release();
    const second = (await other) as { r: { body: Buffer } };
    // Whole, as if it had never waited.
    const again = await api.fetchReport(query(first.i === 0 ? '2026-03-02' : '2026-03-01'));
    expect(second.r.body.equals(again.body)).toBe(true);
    holds[1 - first.i]?.release();
    expect(gate.holding).toBe(0);
  });

  it('never holds back a body under the threshold', async () => {
    const gate = new BigBodyGate(1_000_000_000);
    const holds = [gate.hold(), gate.hold()];
    const both = await Promise.all(
      ['2026-03-01', '2026-03-02'].map((day, i) => api.fetchReport(query(day), { bigBody: holds[i] })),
    );
    expect(both.every((r) => r.body.length > 1_000_000)).toBe(true);
    expect(gate.holding).toBe(0);
  });
});
