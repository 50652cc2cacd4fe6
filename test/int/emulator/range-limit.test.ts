// The emulator playing a server that caps a report's range and takes longer for more rows (issue 37).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { lastDays } from '../../helpers/pipeline.js';
import { addDays } from '../../../src/platform/dates/calendar.js';

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

// Recent days: campaigns deliver inside their flights, which the emulator places around its start day.
const d1 = lastDays(7).from;
const [d2, d3, d4] = [addDays(d1, 1), addDays(d1, 2), addDays(d1, 3)];

describe('--max-days-per-request and --ms-per-1000-rows', () => {
  it('answers a range longer than the limit with a 400 naming it, and a range within it as usual', async () => {
    emulator.setQuirks({ maxDaysPerRequest: 3 });
    const long = await report(d1, d4);
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ field: 'date_until' });
    expect(long.body.message).toMatch(/at most 3 days per request; this one spans 4/);
    const ok = await report(d1, d3);
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body.items ?? {})).toEqual([d1, d2, d3]);
  });

  it('takes longer to answer the more rows it sends', async () => {
    // 5 ms a row: the creatives delivering on one day (some 60) take a third of a second or more.
    emulator.setQuirks({ msPer1000Rows: 5_000 });
    const one = await report(d1, d1);
    const rows = Object.values(one.body.items ?? {}).reduce((n, day) => n + Object.keys(day).length, 0);
    expect(rows).toBeGreaterThan(40);
    expect(one.ms).toBeGreaterThanOrEqual(rows * 5 - 20);
    const three = await report(d1, d3);
    expect(three.ms).toBeGreaterThan(one.ms + rows * 5);
  });
});
