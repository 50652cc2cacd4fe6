import { describe, expect, it } from 'vitest';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { parseReportAsync } from '../../helpers/flatten.js';

const c = (n: number) => ({
  ad_requests: n * 5,
  filled_impressions: n * 4,
  impressions: n * 3,
  measurable_impressions: n * 2,
  viewable_impressions: n,
});
const body = (items: unknown, totals: unknown) => JSON.stringify({ items, totals });

/** The error thrown by fn, for assertions on its type and fields. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, none was thrown');
}

describe('parseReport', () => {
  it('flattens a single-dimension report keyed by day', () => {
    const r = parseReport(body({ '2026-01-01': c(1), '2026-01-02': c(2) }, c(3)), ['day']);
    expect(r.rows).toEqual([
      { dims: ['2026-01-01'], counters: [5, 4, 3, 2, 1] },
      { dims: ['2026-01-02'], counters: [10, 8, 6, 4, 2] },
    ]);
    expect(r.leaves).toBe(2);
    expect(r.reconciliation).toEqual({ ok: true, differences: [] });
  });

  it('flattens nesting in request order, typing each level', () => {
    const items = { '2026-01-01': { '123': { '3': c(1) }, '0456': { '10': c(2) } } };
    const r = parseReport(Buffer.from(body(items, c(3))), ['day', 'campaign_id', 'tier']);
    expect(r.rows.map((x) => x.dims)).toEqual([
      ['2026-01-01', '123', '3'],
      ['2026-01-01', '456', '10'],
    ]);
  });

  it('accepts an array of row objects, with numbers and digit strings', () => {
    const items = [
      { day: '2026-01-01', campaign_id: 7, ...c(1) },
      {
        day: '2026-01-01',
        campaign_id: '8',
        ad_requests: '5',
        filled_impressions: '4',
        impressions: 3,
        measurable_impressions: 2,
        viewable_impressions: 1,
      },
    ];
    const r = parseReport(body(items, c(2)), ['day', 'campaign_id']);
    expect(r.rows).toEqual([
      { dims: ['2026-01-01', '7'], counters: [5, 4, 3, 2, 1] },
      { dims: ['2026-01-01', '8'], counters: [5, 4, 3, 2, 1] },
    ]);
    expect(r.reconciliation.ok).toBe(true);
  });

  it('accepts arrays of rows below keyed levels', () => {
    const items = {
      '2026-01-01': [
        { country: 'DE', ...c(1) },
        { country: 'US', ...c(1) },
      ],
    };
    const r = parseReport(body(items, c(2)), ['day', 'country']);
    expect(r.rows.map((x) => x.dims)).toEqual([
      ['2026-01-01', 'DE'],
      ['2026-01-01', 'US'],
    ]);
  });

  it('reports differences against totals, and fails on them when strict', () => {
    const text = body({ '2026-01-01': c(1) }, { ...c(1), impressions: 4 });
    const r = parseReport(text, ['day']);
    expect(r.reconciliation).toEqual({
      ok: false,
      differences: [{ counter: 'impressions', items: 3, totals: 4 }],
      reason: 'mismatch',
    });
    expect(thrown(() => parseReport(text, ['day'], { strict: true }))).toBeInstanceOf(ReportFormatError);
    expect(thrown(() => parseReport(text, ['day'], { strict: true }))).toHaveProperty(
      'name',
      'ReconciliationError',
    );
  });

  it('returns no rows for empty items that match zero totals', () => {
    expect(parseReport(body({}, c(0)), ['day']).rows).toEqual([]);
    expect(parseReport(body([], c(0)), ['day', 'country']).leaves).toBe(0);
  });

  const broken: Array<[string, string]> = [
    ['not JSON', 'oops'],
    ['an empty body', ''],
    ['a truncated body', body({ '2026-01-01': c(1) }, c(1)).slice(0, 40)],
    ['an HTML page', '<html><body>502 Bad Gateway</body></html>'],
    ['a body cut at a closing brace', body({ '2026-01-01': c(1) }, c(1)).slice(0, -1)],
    ['garbage after the report', `${body({}, c(0))} <html>`],
  ];
  for (const [what, text] of broken) {
    it(`rejects ${what} as a retryable MalformedBodyError at (body)`, () => {
      const error = thrown(() => parseReport(text, ['day']));
      expect(error).toBeInstanceOf(ReportFormatError);
      expect(error).toHaveProperty('name', 'MalformedBodyError');
      expect(error).toBeInstanceOf(ReportFormatError);
      expect(error).toMatchObject({ name: 'MalformedBodyError', path: '(body)', retryable: true });
      expect(error.message).toMatch(/^report body is malformed: not valid JSON: .*a queued pull is retried/);
    });
  }

  it('makes a malformed body final once it is known to repeat', () => {
    const error = thrown(() => parseReport('oops', ['day'])) as ReportFormatError;
    const final = error.repeated('ab12');
    expect(final).toMatchObject({ name: 'MalformedBodyError', retryable: false, problem: error.problem });
    expect(final.message).toContain('the same body (sha256 ab12) came twice in a row');
  });

  const malformed: Array<[string, string, string]> = [
    ['a top-level array', '[]', '(body)'],
    ['a top-level number', '42', '(body)'],
    ['missing items', JSON.stringify({ totals: c(1) }), 'items'],
    ['totals of the wrong type', body({}, [1, 2]), 'totals'],
    ['totals that are a string', body({}, 'none'), 'totals'],
    [
      'a totals counter that is a string word',
      body({}, { ...c(0), impressions: 'many' }),
      'totals.impressions',
    ],
    ['items of the wrong type', body('2026-01-01', c(0)), 'items'],
    ['a leaf that is a number', body({ '2026-01-01': 5 }, c(0)), 'items["2026-01-01"]'],
    ['a leaf that is null', body({ '2026-01-01': null }, c(0)), 'items["2026-01-01"]'],
    [
      'a missing counter',
      body({ '2026-01-01': { ad_requests: 1 } }, c(0)),
      'items["2026-01-01"].filled_impressions',
    ],
    [
      'a negative counter',
      body({ '2026-01-01': { ...c(1), impressions: -1 } }, c(0)),
      'items["2026-01-01"].impressions',
    ],
    [
      'a fractional counter',
      body({ '2026-01-01': { ...c(1), impressions: 1.5 } }, c(0)),
      'items["2026-01-01"].impressions',
    ],
    [
      'a counter beyond 2^53',
      `{"items":{"2026-01-01":{"ad_requests":9007199254740993,"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1}},"totals":${JSON.stringify(c(0))}}`,
      'items["2026-01-01"].ad_requests',
    ],
    [
      'a counter that is a boolean',
      body({ '2026-01-01': { ...c(1), clicks: 1, impressions: true } }, c(0)),
      'items["2026-01-01"].impressions',
    ],
    [
      'a counter string with a sign',
      body({ '2026-01-01': { ...c(1), impressions: '-3' } }, c(0)),
      'items["2026-01-01"].impressions',
    ],
    ['nesting deeper than the dimensions', body({ '2026-01-01': { x: c(1) } }, c(0)), 'items["2026-01-01"]'],
    ['a leaf above the last dimension', body({ '2026-01-01': c(1) }, c(0)), 'items["2026-01-01"]'],
    ['an empty object where counters belong', body({ '2026-01-01': {} }, c(0)), 'items["2026-01-01"]'],
    [
      'a row that contradicts its key',
      body({ '2026-01-01': [{ day: '2026-01-02', country: 'DE', ...c(1) }] }, c(1)),
      'items["2026-01-01"][0].day',
    ],
  ];
  for (const [what, text, path] of malformed) {
    it(`rejects ${what} with a ReportFormatError naming ${path}`, () => {
      const dims =
        what.includes('above the last') || what.includes('contradicts')
          ? (['day', 'country'] as const)
          : (['day'] as const);
      const error = thrown(() => parseReport(text, dims));
      expect(error).toBeInstanceOf(ReportFormatError);
      expect((error as ReportFormatError).path).toBe(path);
      expect((error as ReportFormatError).retryable).toBe(false);
    });
  }

  it('rejects dimension values that do not fit their column, naming dimension and value', () => {
    const cases: Array<
      [string, readonly ['day'] | readonly ['campaign_id'] | readonly ['tier'] | readonly ['country'], string]
    > = [
      [body({ '2026-02-30': c(1) }, c(1)), ['day'], '2026-02-30'],
      [body({ abc: c(1) }, c(1)), ['campaign_id'], 'abc'],
      [body({ '99999999999999999999': c(1) }, c(1)), ['campaign_id'], '99999999999999999999'],
      [body({ '40000': c(1) }, c(1)), ['tier'], '40000'],
      [body([{ country: 'D\u0000E', ...c(1) }], c(1)), ['country'], 'D\u0000E'],
      [body([{ country: null, ...c(1) }], c(1)), ['country'], 'null'],
    ];
    for (const [text, dims, value] of cases) {
      const error = thrown(() => parseReport(text, dims));
      expect(error).toBeInstanceOf(ReportFormatError);
      expect(error).toHaveProperty('name', 'DimensionValueError');
      // The dimension and the value, as a JSON value (null is the value null).
      expect(error.message).toContain(
        `dimension ${dims[0]}: value ${value === 'null' ? 'null' : JSON.stringify(value)} is not`,
      );
      expect(error.message).toContain(dims[0]);
    }
  });

  it('rejects two rows with the same dimension values', () => {
    const twice = body(
      [
        { day: '2026-01-01', ...c(1) },
        { day: '2026-01-01', ...c(1) },
      ],
      c(2),
    );
    expect(thrown(() => parseReport(twice, ['day']))).toBeInstanceOf(ReportFormatError);
    const canonicalClash = body({ '7': c(1), '007': c(1) }, c(2));
    expect(thrown(() => parseReport(canonicalClash, ['campaign_id']))).toBeInstanceOf(ReportFormatError);
  });

  it('lets other callbacks run while a large report flattens asynchronously', async () => {
    const items: Record<string, unknown> = {};
    for (let id = 1; id <= 1000; id++) items[String(id)] = c(1);
    let ticks = 0;
    let running = true;
    const tick = () => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const r = await parseReportAsync(body(items, c(1000)), ['campaign_id'], { chunk: 50 });
    running = false;
    expect(r.leaves).toBe(1000);
    // 1000 leaves in chunks of 50: about 20 yields, each letting the ticker run once.
    expect(ticks).toBeGreaterThanOrEqual(15);
  });

  it('gives the same result synchronously and in yielding chunks', async () => {
    const items: Record<string, Record<string, unknown>> = {};
    for (let d = 1; d <= 9; d++) {
      const day: Record<string, unknown> = {};
      for (let id = 1; id <= 50; id++) day[String(id)] = c(id);
      items[`2026-01-0${d}`] = day;
    }
    const text = body(items, c(9 * ((50 * 51) / 2)));
    const sync = parseReport(text, ['day', 'campaign_id']);
    const chunked = await parseReportAsync(text, ['day', 'campaign_id'], { chunk: 7 });
    expect(chunked).toEqual(sync);
    expect(sync.leaves).toBe(450);
    expect(sync.reconciliation.ok).toBe(true);
  });
});
