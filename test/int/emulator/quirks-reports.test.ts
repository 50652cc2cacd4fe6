import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorQuirks, RunningEmulator } from '../../../src/emulator/index.js';
import { decodeReport } from '../../unit/emulator/decode.js';
import { call, start } from './helpers.js';

let emu: RunningEmulator;
beforeAll(async () => {
  // Enough cells for a body of several 64 KB chunks; the clock puts the last days in late data.
  emu = await start({ seed: 15, cellsPerDay: 3000, lateDataDays: 3 });
});
afterAll(() => emu.close());

const DIMS = ['day', 'campaign_id', 'creative_id', 'country'];
const PATH = `/reports?date_from=2025-06-10&date_until=2025-06-14&dimensions=${DIMS.join(',')}`;

async function report(quirks: EmulatorQuirks) {
  emu.setQuirks(quirks);
  const r = await call(emu, 'GET', PATH);
  expect(r.status).toBe(200);
  return { text: r.text, decoded: decodeReport(r.json, DIMS) };
}

describe('emulator report quirks over HTTP', () => {
  it.each<[string, EmulatorQuirks]>([
    ['stringValues', { stringValues: true }],
    ['sortKeys', { sortKeys: true }],
    ['reportShape rows', { reportShape: 'rows' }],
    ['all of them', { stringValues: true, sortKeys: true, emptyAsArray: true, reportShape: 'rows' }],
  ])('%s: the numbers of the faithful report in another encoding', async (_name, quirks) => {
    const faithful = await report({});
    const quirky = await report(quirks);
    expect(faithful.text.length).toBeGreaterThan(200_000);
    expect(quirky.text).not.toBe(faithful.text);
    expect(quirky.decoded).toEqual(faithful.decoded);
  });

  it('emptyAsArray: a report of a future day comes as {"items":[],"totals":[]}', async () => {
    emu.setQuirks({ emptyAsArray: true });
    const r = await call(emu, 'GET', '/reports?date_from=2025-07-01&date_until=2025-07-01&dimensions=day');
    expect(r.text).toBe('{"items":[],"totals":[]}');
  });

  it.each<[EmulatorQuirks['totals'], 'missing' | 'empty']>([
    ['missing', 'missing'],
    ['empty-array', 'empty'],
  ])('totals %s: the same items without usable totals', async (totals, seen) => {
    const faithful = await report({});
    const quirky = await report({ totals });
    expect(quirky.decoded.totals).toBe(seen);
    expect(quirky.decoded.leaves).toEqual(faithful.decoded.leaves);
  });
});
