import { describe, expect, it } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { generateCatalogue } from '../../../src/emulator/catalogue.js';
import { FAITHFUL_QUIRKS } from '../../../src/emulator/options.js';
import { ReportEngine, type ReportEncoding } from '../../../src/emulator/report/render.js';
import { buildTrafficModel } from '../../../src/emulator/report/traffic.js';
import { decodeReport } from './decode.js';

// Flights around the test's days, as an emulator started on TODAY places them.
const engine = new ReportEngine(buildTrafficModel(generateCatalogue(9, {}, Date.UTC(2025, 5, 3) / 1000)), {
  seed: 9,
  cellsPerDay: 400,
  lateDataDays: 3,
});
const TODAY = '2025-06-03';
const body = (dims: readonly Dimension[], e: Partial<ReportEncoding> = {}, until = '2025-06-02') =>
  [...engine.render('2025-05-30', until, dims, TODAY, { ...FAITHFUL_QUIRKS, ...e })].join('');
const DIMS: Dimension[] = ['day', 'tier', 'campaign_id', 'device'];

const ENCODINGS: [string, Partial<ReportEncoding>][] = [
  ['string values', { stringValues: true }],
  ['sorted keys', { sortKeys: true }],
  ['rows', { reportShape: 'rows' }],
  ['rows with string values and sorted keys', { reportShape: 'rows', stringValues: true, sortKeys: true }],
  ['everything php does', { stringValues: true, sortKeys: true, emptyAsArray: true }],
];

describe('emulator report encodings', () => {
  it.each(ENCODINGS)('%s: the same numbers as the faithful report, late-data days included', (_name, e) => {
    const faithful = decodeReport(JSON.parse(body(DIMS)), DIMS);
    const quirky = decodeReport(JSON.parse(body(DIMS, e)), DIMS);
    expect(quirky.leaves.size).toBeGreaterThan(100);
    expect(quirky).toEqual(faithful);
  });

  it('writes every counter of items and totals as a string of digits under stringValues', () => {
    const text = body(['day', 'device'], { stringValues: true });
    expect(text).not.toMatch(/"[a-z_]+":\d/);
    const doc = JSON.parse(text) as { totals: Record<string, unknown> };
    for (const v of Object.values(doc.totals)) expect(v).toMatch(/^\d+$/);
  });

  it('puts totals before items and sorts keys as text under sortKeys', () => {
    const text = body(['tier'], { sortKeys: true });
    expect(text.startsWith('{"totals":{"ad_requests":')).toBe(true);
    const items = text.slice(text.indexOf('"items":'));
    const keys = [...items.matchAll(/"(\d+)":\{/g)].map((m) => m[1]);
    expect(keys).toEqual([...keys].sort());
    expect(keys.indexOf('10')).toBeLessThan(keys.indexOf('2'));
    expect(body(['tier']).match(/"items":\{"1":/)).not.toBeNull();
  });

  it('leaves totals out, or sends them as [], as the totals quirk says', () => {
    expect(JSON.parse(body(['day'], { totals: 'missing' }))).not.toHaveProperty('totals');
    expect(JSON.parse(body(['day'], { totals: 'empty-array' })).totals).toEqual([]);
    expect(JSON.parse(body(['day'], { totals: 'missing', sortKeys: true }))).not.toHaveProperty('totals');
  });

  it('sends an empty report as {"items":[],"totals":[]} under emptyAsArray, as {} and zeros otherwise', () => {
    const future = (e: Partial<ReportEncoding>) =>
      [...engine.render('2025-07-01', '2025-07-01', ['day'], TODAY, { ...FAITHFUL_QUIRKS, ...e })].join('');
    expect(future({ emptyAsArray: true })).toBe('{"items":[],"totals":[]}');
    expect(future({ emptyAsArray: true, sortKeys: true })).toBe('{"totals":[],"items":[]}');
    expect(JSON.parse(future({}))).toMatchObject({ items: {}, totals: { ad_requests: 0 } });
    expect(JSON.parse(future({ reportShape: 'rows' }))).toMatchObject({
      items: [],
      totals: { ad_requests: 0 },
    });
  });

  it('writes rows with every dimension, integer ones as numbers (strings under stringValues)', () => {
    const rows = (JSON.parse(body(DIMS, { reportShape: 'rows' })) as { items: Record<string, unknown>[] })
      .items;
    const [first] = rows;
    expect(Object.keys(first ?? {})).toEqual([
      ...DIMS,
      'ad_requests',
      'filled_impressions',
      'impressions',
      'measurable_impressions',
      'viewable_impressions',
    ]);
    expect([typeof first?.day, typeof first?.tier, typeof first?.campaign_id, typeof first?.device]).toEqual([
      'string',
      'number',
      'number',
      'string',
    ]);
    const quoted = (
      JSON.parse(body(DIMS, { reportShape: 'rows', stringValues: true, sortKeys: true })) as {
        items: Record<string, unknown>[];
      }
    ).items[0];
    expect(quoted?.campaign_id).toMatch(/^\d{9}$/);
    expect(quoted?.impressions).toMatch(/^\d+$/);
    expect(Object.keys(quoted ?? {})).toEqual(Object.keys(quoted ?? {}).sort());
  });
});
