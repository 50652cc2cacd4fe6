// Report bodies in every reading of the spec that a server may choose: values as strings, keys in
// alphabetical order (totals before items), totals missing or sent as []. Each goes through the
// streaming scanner (parseReport, streamReport) and the tree walk (parseReportObject), which must
// agree.
import { describe, expect, it } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { countersText, reconciliationText } from '../../../src/status/format.js';
import { parseReport, type ParsedReport } from '../../../src/flatten/parse.js';
import { parseReportObject } from '../../helpers/flatten.js';
import { streamReport } from '../../../src/flatten/stream.js';
import type { ReportRow } from '../../../src/flatten/types.js';

const NONE = {
  ad_requests: null,
  filled_impressions: null,
  impressions: null,
  measurable_impressions: null,
  viewable_impressions: null,
};

/** Counters as the API would send them; `asText` quotes each number ("123"). */
function counters(n: number, asText = false): Record<string, number | string> {
  const values = {
    ad_requests: 4 * n,
    filled_impressions: 3 * n,
    impressions: 2 * n,
    measurable_impressions: n,
    viewable_impressions: n,
  };
  return asText ? Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)])) : values;
}

/** Parses `text` all three ways; they must agree on rows, totals and reconciliation. */
async function parseAllWays(text: string, dims: readonly Dimension[]): Promise<ParsedReport> {
  const streamed = parseReport(text, dims);
  const tree = parseReportObject(JSON.parse(text), dims);
  const stream = streamReport(text, dims, { batch: 2 });
  const rows: ReportRow[] = [];
  for await (const row of stream.rows) rows.push(row);
  const sort = (r: readonly ReportRow[]) => [...r].sort((a, b) => (a.dims.join() < b.dims.join() ? -1 : 1));
  expect(sort(tree.rows)).toEqual(sort(streamed.rows));
  expect(rows).toEqual(streamed.rows);
  expect(tree.totals).toEqual(streamed.totals);
  expect(tree.reconciliation).toEqual(streamed.reconciliation);
  expect(stream.summary()).toMatchObject({
    totals: streamed.totals,
    reconciliation: streamed.reconciliation,
  });
  return streamed;
}

describe('string-encoded values', () => {
  it('reads counters sent as strings, in the rows and in the totals', async () => {
    const text = JSON.stringify({
      items: { '2026-01-01': counters(1, true), '2026-01-02': counters(2, true) },
      totals: counters(3, true),
    });
    const r = await parseAllWays(text, ['day']);
    expect(r.rows).toEqual([
      { dims: ['2026-01-01'], counters: [4, 3, 2, 1, 1] },
      { dims: ['2026-01-02'], counters: [8, 6, 4, 2, 2] },
    ]);
    expect(r.totals).toEqual({
      ad_requests: 12,
      filled_impressions: 9,
      impressions: 6,
      measurable_impressions: 3,
      viewable_impressions: 3,
    });
    expect(r.reconciliation).toEqual({ ok: true, differences: [] });
  });

  it('reads ids and tiers sent as strings in row-form items', async () => {
    const text = JSON.stringify({
      items: [
        { day: '2026-01-01', campaign_id: '862599431', tier: '3', ...counters(1, true) },
        { day: '2026-01-01', campaign_id: '0862599432', tier: 10, ...counters(1) },
      ],
      totals: counters(2, true),
    });
    const r = await parseAllWays(text, ['day', 'campaign_id', 'tier']);
    expect(r.rows.map((x) => x.dims)).toEqual([
      ['2026-01-01', '862599431', '3'],
      ['2026-01-01', '862599432', '10'],
    ]);
    expect(r.reconciliation.ok).toBe(true);
  });

  it('still rejects a string that is not a number, naming where it is', () => {
    const text = JSON.stringify({
      items: { '2026-01-01': { ...counters(1, true), impressions: '1e3' } },
      totals: counters(1),
    });
    expect(() => parseReport(text, ['day'])).toThrow(
      /items\["2026-01-01"\]\.impressions: the counter is string "1e3"/,
    );
    const totals = JSON.stringify({ items: {}, totals: { ...counters(0), impressions: 'true' } });
    expect(() => parseReport(totals, ['day'])).toThrow(ReportFormatError);
  });
});

describe('keys in alphabetical order', () => {
  it('reads totals that come before items, and sorted keys inside the items', async () => {
    const leaf = (n: number) => ({ ...counters(n, true), campaign_id: String(100 + n), day: '2026-01-01' });
    const sorted = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
    const text = `{"totals":${JSON.stringify(sorted(counters(3, true)))},"items":[${JSON.stringify(sorted(leaf(1)))},${JSON.stringify(sorted(leaf(2)))}]}`;
    expect(text.indexOf('"totals"')).toBeLessThan(text.indexOf('"items"'));
    const r = await parseAllWays(text, ['day', 'campaign_id']);
    expect(r.rows.map((x) => x.dims)).toEqual([
      ['2026-01-01', '101'],
      ['2026-01-01', '102'],
    ]);
    expect(r.reconciliation.ok).toBe(true);
  });
});

describe('missing totals', () => {
  const items = { '2026-01-01': counters(1), '2026-01-02': counters(2) };
  const bodies: Array<[string, string]> = [
    ['no totals key', JSON.stringify({ items })],
    ['"totals": []', JSON.stringify({ items, totals: [] })],
    ['"totals": null', JSON.stringify({ items, totals: null })],
    ['"totals": {}', JSON.stringify({ items, totals: {} })],
    ['"totals": [] before the items', `{"totals":[],"items":${JSON.stringify(items)}}`],
  ];
  for (const [what, text] of bodies) {
    it(`loads the rows of a body with ${what}, unreconciled for "no totals"`, async () => {
      const r = await parseAllWays(text, ['day']);
      expect(r.rows).toHaveLength(2);
      expect(r.totals).toEqual(NONE);
      expect(r.reconciliation).toEqual({ ok: false, differences: [], reason: 'no totals' });
      expect(reconciliationText(r.reconciliation)).toBe(
        'reconciliation: NOT CHECKED, no totals (the rows are unchecked)',
      );
      expect(countersText(r.totals)).toBe('none (the body has no totals)');
    });
  }

  it('fails a body without totals under strict reconciliation, saying why', () => {
    const error = (() => {
      try {
        parseReport(JSON.stringify({ items }), ['day'], { strict: true });
      } catch (e) {
        return e as ReportFormatError;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ReportFormatError);
    expect(error).toHaveProperty('name', 'ReconciliationError');
    expect(error?.problem).toBe('no totals');
    expect(error?.message).toMatch(/has no totals/);
  });

  it('checks the counters that partial totals give, and calls the rest unchecked', async () => {
    const given = { ad_requests: 12, impressions: 7, viewable_impressions: null };
    const r = await parseAllWays(JSON.stringify({ items, totals: given }), ['day']);
    expect(r.totals).toEqual({ ...NONE, ad_requests: 12, impressions: 7 });
    expect(r.reconciliation).toEqual({
      ok: false,
      differences: [{ counter: 'impressions', items: 6, totals: 7 }],
      reason: 'partial totals',
    });
    expect(countersText(r.totals)).toBe(
      'ad_requests=12 filled_impressions=missing impressions=7 measurable_impressions=missing viewable_impressions=missing',
    );
    expect(() => parseReport(JSON.stringify({ items, totals: given }), ['day'], { strict: true })).toThrow(
      /totals lack some counters.*impressions items=6 totals=7/,
    );
  });

  it('still rejects totals of another type, or a non-empty array', () => {
    for (const totals of ['12', '[1]', 'true'])
      expect(() => parseReport(`{"items":{},"totals":${totals}}`, ['day'])).toThrow(
        /at totals: expected an object of counters/,
      );
  });
});
