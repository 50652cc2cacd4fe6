// The emulator playing a server that caps a report's range and takes longer for more rows (issue 37).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ seed: 3, cellsPerDay: 200, lateDataDays: 0 });
});
afterAll(async () => {
  await emulator.close();
});

const report = async (from: string, until: string) => {
  const started = performance.now();
  const res = await fetch(
    `${emulator.url}/reports?date_from=${from}&date_until=${until}&dimensions=day&dimensions=creative_id`,
    { headers: { authorization: 'Bearer demo-key' } },
  );
  const body = (await res.json()) as { message?: string; field?: string; items?: Record<string, object> };
  return { status: res.status, body, ms: performance.now() - started };
};

describe('--max-days-per-request and --ms-per-1000-rows', () => {
  it('answers a range longer than the limit with a 400 naming it, and a range within it as usual', async () => {
    emulator.setQuirks({ maxDaysPerRequest: 3 });
    const long = await report('2026-01-01', '2026-01-04');
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ field: 'date_until' });
    expect(long.body.message).toMatch(/at most 3 days per request; this one spans 4/);
    const ok = await report('2026-01-01', '2026-01-03');
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body.items ?? {})).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
  });

  it('takes longer to answer the more rows it sends', async () => {
    emulator.setQuirks({ msPer1000Rows: 1_000 });
    const one = await report('2026-01-01', '2026-01-01');
    const rows = Object.values(one.body.items ?? {}).reduce((n, day) => n + Object.keys(day).length, 0);
    expect(rows).toBeGreaterThan(100);
    expect(one.ms).toBeGreaterThanOrEqual(rows - 20);
    const three = await report('2026-01-01', '2026-01-03');
    expect(three.ms).toBeGreaterThan(one.ms + rows);
  });
});
