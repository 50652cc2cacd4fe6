import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Dimension, COUNTERS } from '../../../src/platform/config/dimensions.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { type Counters } from '../../../src/flatten/types.js';

/** Values a dimension can take in generated reports, already in canonical form. */
const VALUE: Record<string, fc.Arbitrary<string>> = {
  day: fc
    .integer({ min: 0, max: 3650 })
    .map((n) => new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString().slice(0, 10)),
  campaign_id: fc.bigInt({ min: 1n, max: 9_223_372_036_854_775_807n }).map(String),
  zone_id: fc.integer({ min: 1, max: 1_000_000_000 }).map(String),
  tier: fc.integer({ min: 1, max: 10 }).map(String),
  country: fc.constantFrom('DE', 'US', 'FR', ''),
  domain: fc.string({ maxLength: 12 }),
  hour: fc.integer({ min: 0, max: 23 }).map(String),
};
const NAMES = Object.keys(VALUE) as Dimension[];
const counters = fc.tuple(...COUNTERS.map(() => fc.integer({ min: 0, max: 2 ** 40 })));

const report = fc.shuffledSubarray(NAMES, { minLength: 1, maxLength: 4 }).chain((dims) =>
  fc.record({
    dims: fc.constant(dims),
    shape: fc.constantFrom('nested', 'rows', 'mixed'),
    cells: fc.array(fc.tuple(fc.tuple(...dims.map((d) => VALUE[d] as fc.Arbitrary<string>)), counters), {
      maxLength: 60,
    }),
  }),
);

/** Groups cells by their dimension values, as the API aggregates them. */
function group(cells: Array<[string[], number[]]>): Map<string, { dims: string[]; counters: number[] }> {
  const out = new Map<string, { dims: string[]; counters: number[] }>();
  for (const [dims, values] of cells) {
    const id = dims.join('\u0000');
    const row = out.get(id) ?? { dims, counters: [0, 0, 0, 0, 0] };
    values.forEach((v, i) => (row.counters[i] = (row.counters[i] ?? 0) + v));
    out.set(id, row);
  }
  return out;
}

function leafOf(counters: number[], fields: Record<string, string> = {}): Record<string, unknown> {
  const leaf: Record<string, unknown> = { ...fields };
  COUNTERS.forEach((c, i) => (leaf[c] = counters[i]));
  return leaf;
}

/** Encodes grouped rows as the API might: nested in request order, an array of rows, or nested then rows. */
function encode(
  dims: Dimension[],
  shape: string,
  rows: Iterable<{ dims: string[]; counters: number[] }>,
): unknown {
  if (shape === 'rows') {
    return [...rows].map((r) => leafOf(r.counters, Object.fromEntries(dims.map((d, i) => [d, r.dims[i]!]))));
  }
  const nestLevels = shape === 'nested' ? dims.length : Math.max(dims.length - 1, 0);
  // Null-prototype objects: a domain value like "valueOf" must be a key, not Object.prototype's method.
  const root = Object.create(null) as Record<string, unknown>;
  for (const r of rows) {
    let node = root;
    for (let i = 0; i < nestLevels - 1; i++)
      node = (node[r.dims[i]!] ??= Object.create(null)) as Record<string, unknown>;
    if (shape === 'nested') node[r.dims[nestLevels - 1]!] = leafOf(r.counters);
    else {
      const rest = Object.fromEntries(dims.slice(nestLevels).map((d, i) => [d, r.dims[nestLevels + i]!]));
      const at = nestLevels === 0 ? root : node;
      const key = nestLevels === 0 ? 'all' : r.dims[nestLevels - 1]!;
      ((at[key] ??= []) as unknown[]).push(leafOf(r.counters, rest));
    }
  }
  return shape === 'mixed' && nestLevels === 0 ? (root.all ?? []) : root;
}

describe('report flattening (property)', () => {
  it('rows sum to the totals and there is one row per leaf, for any dimension set and shape', () => {
    fc.assert(
      fc.property(report, ({ dims, shape, cells }) => {
        const rows = group(cells);
        const totals = {} as Counters;
        COUNTERS.forEach((c, i) => (totals[c] = [...rows.values()].reduce((s, r) => s + r.counters[i]!, 0)));
        const parsed = parseReport(
          JSON.stringify({ items: encode(dims, shape, rows.values()), totals }),
          dims,
        );
        expect(parsed.leaves).toBe(rows.size);
        expect(parsed.rows.length).toBe(rows.size);
        expect(parsed.reconciliation).toEqual({ ok: true, differences: [] });
        const got = new Map(parsed.rows.map((r) => [r.dims.join('\u0000'), [...r.counters]]));
        for (const [id, r] of rows) expect(got.get(id)).toEqual(r.counters);
      }),
      { numRuns: 300 },
    );
  });

  it('any change to one counter of one leaf is seen by reconciliation', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 1000 }), (counter, delta) => {
        const items = { '2026-01-01': leafOf([1, 2, 3, 4, 5]), '2026-01-02': leafOf([1, 1, 1, 1, 1]) };
        const totals = {} as Counters;
        COUNTERS.forEach((c, i) => (totals[c] = [2, 3, 4, 5, 6][i]! + (i === counter ? delta : 0)));
        const r = parseReport(JSON.stringify({ items, totals }), ['day']);
        expect(r.reconciliation.ok).toBe(false);
        expect(r.reconciliation.differences.map((d) => d.counter)).toEqual([COUNTERS[counter]]);
      }),
    );
  });
});
