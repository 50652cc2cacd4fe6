import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DIMENSIONS, type Dimension, COUNTERS } from '../../../src/platform/config/dimensions.js';
import { generateCatalogue } from '../../../src/emulator/catalogue.js';
import { ReportEngine } from '../../../src/emulator/report/render.js';
import { buildTrafficModel } from '../../../src/emulator/report/traffic.js';
import { leaves, sum } from './report-helpers.js';

const model = buildTrafficModel(generateCatalogue(7));
const engine = (options: { cellsPerDay?: number; lateDataDays?: number; seed?: number } = {}) =>
  new ReportEngine(model, {
    seed: options.seed ?? 7,
    cellsPerDay: options.cellsPerDay ?? 500,
    lateDataDays: options.lateDataDays ?? 0,
  });
const body = (
  e: ReportEngine,
  from: string,
  until: string,
  dims: readonly Dimension[],
  today = '2030-01-01',
) => [...e.render(from, until, dims, today)].join('');
const parse = (text: string) => JSON.parse(text) as { items: unknown; totals: Record<string, number> };

/** The key format of each dimension, as documented in docs/emulator.md. */
const KEY_FORMAT: Record<Dimension, RegExp> = {
  year: /^\d{4}$/,
  month: /^\d{4}-\d{2}$/,
  day: /^\d{4}-\d{2}-\d{2}$/,
  hour: /^([01]\d|2[0-3])$/,
  weekday: /^(monday|tuesday|wednesday|thursday|friday|saturday|sunday)$/,
  campaign_id: /^[1-9]\d{8}$/,
  creative_id: /^[1-9]\d{8}$/,
  zone_id: /^[1-9]\d{8}$/,
  ad_format: /^(display|native|vast|redirect)$/,
  ad_size: /^\d+x\d+$/,
  landing_url: /^https:\/\/\S+$/,
  tier: /^([1-9]|10)$/,
  country: /^[A-Z]{2}$/,
  region: /^[\p{L}\p{N} '-]+$/u,
  city: /^[\p{L}\p{N} '-]+$/u,
  language: /^[a-z]{2}$/,
  domain: /^[a-z0-9.-]+\.[a-z.]+$/,
  device: /^(desktop|tablet|mobile)$/,
  browser: /^[A-Z][A-Za-z ]+$/,
};

describe('emulator report data', () => {
  it('any two dimension sets over several days agree on their sums, and totals equal the sum of items', () => {
    const e = engine();
    const reference = parse(body(e, '2025-03-01', '2025-03-04', ['day'])).totals;
    fc.assert(
      fc.property(fc.shuffledSubarray([...DIMENSIONS], { minLength: 1, maxLength: 4 }), (dims) => {
        const report = parse(body(e, '2025-03-01', '2025-03-04', dims));
        const all = leaves(report.items, dims.length);
        expect(sum(all)).toEqual(report.totals);
        expect(report.totals).toEqual(reference);
      }),
      { numRuns: 40, seed: 42 },
    );
  });

  it('keeps impressions <= filled <= requests and viewable <= measurable <= impressions in every leaf', () => {
    const report = parse(
      body(engine({ lateDataDays: 3 }), '2025-03-01', '2025-03-03', ['hour', 'creative_id'], '2025-03-03'),
    );
    for (const { counters: c } of leaves(report.items, 2)) {
      for (const name of COUNTERS) expect(Number.isInteger(c[name]) && c[name] >= 0).toBe(true);
      expect(c.impressions).toBeLessThanOrEqual(c.filled_impressions);
      expect(c.filled_impressions).toBeLessThanOrEqual(c.ad_requests);
      expect(c.viewable_impressions).toBeLessThanOrEqual(c.measurable_impressions);
      expect(c.measurable_impressions).toBeLessThanOrEqual(c.impressions);
    }
  });

  it('nests one level per dimension in request order, keyed in each dimension documented format', () => {
    const e = engine();
    for (let i = 0; i < DIMENSIONS.length; i++) {
      const dims = [DIMENSIONS[i], DIMENSIONS[(i + 5) % DIMENSIONS.length]] as Dimension[];
      const all = leaves(parse(body(e, '2025-03-01', '2025-03-02', dims)).items, 2);
      expect(all.length).toBeGreaterThan(0);
      for (const leaf of all) {
        dims.forEach((d, level) => expect(leaf.keys[level]).toMatch(KEY_FORMAT[d]));
        expect(Object.keys(leaf.counters)).toEqual([...COUNTERS]);
      }
    }
  });

  it('keys a one-dimension report by the value itself, days as YYYY-MM-DD', () => {
    const report = parse(body(engine(), '2025-02-27', '2025-03-02', ['day']));
    expect(Object.keys(report.items as object)).toEqual([
      '2025-02-27',
      '2025-02-28',
      '2025-03-01',
      '2025-03-02',
    ]);
  });

  it('includes text values that need escaping, and only valid JSON', () => {
    const text = body(engine({ cellsPerDay: 5000 }), '2025-03-01', '2025-03-01', ['city', 'landing_url']);
    const keys = leaves(parse(text).items, 2).flatMap((l) => l.keys);
    expect(keys.some((k) => k.includes("'"))).toBe(true);
    expect(keys.some((k) => k.includes('"') && k.includes(','))).toBe(true);
  });

  it('gives byte-identical bodies for the same seed whatever the request order or cache state', () => {
    const a = engine();
    const first = body(a, '2025-03-01', '2025-03-03', ['country', 'day']);
    body(a, '2025-01-01', '2025-01-09', ['tier']);
    const b = engine({ seed: 7 });
    body(b, '2025-03-03', '2025-03-03', ['device']);
    expect(body(b, '2025-03-01', '2025-03-03', ['country', 'day'])).toBe(first);
    expect(body(a, '2025-03-01', '2025-03-03', ['country', 'day'])).toBe(first);
    expect(body(engine({ seed: 8 }), '2025-03-01', '2025-03-03', ['country', 'day'])).not.toBe(first);
  });

  it('makes cells distinct in campaign, creative, zone, country and device up to the combination count', () => {
    const dims: Dimension[] = ['day', 'campaign_id', 'creative_id', 'zone_id', 'country', 'device'];
    const report = parse(body(engine({ cellsPerDay: 20_000 }), '2025-03-01', '2025-03-01', dims));
    expect(leaves(report.items, dims.length)).toHaveLength(20_000);
  });

  it('references only the catalogue: creatives under their own campaign, zones of that campaign', () => {
    const { campaigns } = model.catalogue;
    const report = parse(
      body(engine(), '2025-03-01', '2025-03-01', [
        'campaign_id',
        'creative_id',
        'zone_id',
        'ad_format',
        'tier',
      ]),
    );
    for (const { keys } of leaves(report.items, 5)) {
      const campaign = campaigns.find((c) => String(c.campaign_id) === keys[0]);
      expect(campaign).toBeDefined();
      expect(campaign?.creative_ids.map(String)).toContain(keys[1]);
      expect(campaign?.zone_ids.map(String)).toContain(keys[2]);
      expect([campaign?.ad_format, String(campaign?.tier)]).toEqual([keys[3], keys[4]]);
    }
  });
});

describe('emulator late data', () => {
  const e = engine({ lateDataDays: 3 });
  const totals = (day: string, today: string) => parse(body(e, day, day, ['day'], today)).totals;

  it('reports a recent day as a growing fraction that ends final once older than the window', () => {
    const seen = ['2025-03-10', '2025-03-11', '2025-03-12', '2025-03-13', '2025-03-20'].map(
      (today) => totals('2025-03-10', today).impressions,
    );
    const final = seen[4] as number;
    expect(seen[0]).toBeLessThan(seen[1] as number);
    expect(seen[1]).toBeLessThan(seen[2] as number);
    expect(seen[2]).toBeLessThan(final);
    expect(seen[3]).toBe(final);
    expect(seen[0]).toBeCloseTo(final / 4, -3);
  });

  it('keeps cross-dimension sums exact while a day is still restating', () => {
    const partial = parse(body(e, '2025-03-09', '2025-03-10', ['browser', 'day'], '2025-03-10'));
    expect(sum(leaves(partial.items, 2))).toEqual(partial.totals);
    expect(partial.totals).toEqual(
      parse(body(e, '2025-03-09', '2025-03-10', ['zone_id'], '2025-03-10')).totals,
    );
  });

  it('answers a future day with empty items and zero totals', () => {
    const report = parse(body(e, '2025-03-11', '2025-03-12', ['day'], '2025-03-10'));
    expect(report.items).toEqual({});
    expect(Object.values(report.totals)).toEqual([0, 0, 0, 0, 0]);
  });

  it('treats every past day as final with a window of 0', () => {
    const zero = engine({ lateDataDays: 0 });
    const today = parse(body(zero, '2025-03-10', '2025-03-10', ['day'], '2025-03-10')).totals;
    expect(today).toEqual(parse(body(zero, '2025-03-10', '2025-03-10', ['day'], '2026-01-01')).totals);
  });
});

describe('emulator pacing', () => {
  const first = Date.UTC(2026, 2, 10) / 1000;
  const catalogue = generateCatalogue(1, {}, first);
  const paced = new ReportEngine(buildTrafficModel(catalogue), {
    seed: 1,
    cellsPerDay: 2000,
    lateDataDays: 0,
  });
  const day = (offset: number) => new Date((first + offset * 86400) * 1000).toISOString().slice(0, 10);
  const report = parse(body(paced, day(-25), day(35), ['campaign_id', 'day'], day(40)));
  const days = new Map(leaves(report.items, 2).map((l) => [l.keys.join(' '), l.counters.impressions]));

  it('gives two in three campaigns a goal, in turn of every kind, its flight in whole days around the first day', () => {
    const goals = catalogue.campaigns.filter((c) => !Array.isArray(c.pacing));
    expect(goals).toHaveLength(13);
    const kinds = new Set(
      goals.map((c) => (Array.isArray(c.pacing) ? '' : `${c.pacing.period} ${c.pacing.speed}`)),
    );
    expect([...kinds].sort()).toEqual(['day asap', 'day spread', 'due_date asap', 'due_date spread']);
    const flights = goals.map((c) => [c.delivery.start, c.delivery.end]);
    expect(flights).toContainEqual([0, 0]);
    expect(flights.some(([s, e]) => s !== 0 && e === 0)).toBe(true);
    expect(flights.some(([, e]) => e !== 0 && (e ?? 0) < first)).toBe(true);
    expect(flights.some(([s]) => (s ?? 0) > first)).toBe(true);
    for (const c of catalogue.campaigns)
      expect([c.delivery.start % 86400, c.delivery.end % 86400]).toEqual([0, 0]);
  });

  it('reports a campaign only on days of its flight, a campaign with a goal at its impressions a day', () => {
    for (const c of catalogue.campaigns)
      for (let d = -25; d <= 35; d++) {
        const n = first + d * 86400;
        const flies =
          (c.delivery.start === 0 || c.delivery.start <= n) && (c.delivery.end === 0 || c.delivery.end > n);
        const impressions = days.get(`${c.campaign_id} ${day(d)}`);
        if (!flies) expect(impressions, `${c.name} ${day(d)}`).toBeUndefined();
        const daily = catalogue.daily.get(c.campaign_id);
        if (flies && daily !== undefined) {
          expect(impressions, `${c.name} ${day(d)}`).toBeLessThanOrEqual(daily);
          expect(impressions, `${c.name} ${day(d)}`).toBeGreaterThan(daily * 0.99);
        }
      }
  });
});
