import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Dimension, COUNTERS } from '../../../src/platform/config/dimensions.js';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { parseReport, type ParsedReport } from '../../../src/flatten/parse.js';
import { parseReportObject } from '../../helpers/flatten.js';
import { streamReport } from '../../../src/flatten/stream.js';

/** The outcome of a parse: its result, or the error's class name and message. */
function outcome(fn: () => ParsedReport): ParsedReport | string {
  try {
    return fn();
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/** What the stream rejects on purpose where JSON.parse + the tree walk would not. */
const STRICTER = /duplicate key: it appears twice in its object|a row of counters also holds a nested/;

/** Streaming parse and JSON.parse + tree walk: both fail, or both give the same result (true). */
function agree(text: string, dims: readonly Dimension[]): boolean {
  const streamed = outcome(() => parseReport(text, dims));
  const tree = outcome(() => parseReportObject(JSON.parse(text), dims));
  const treeOrSyntax = (() => {
    try {
      JSON.parse(text);
    } catch {
      return 'ReportFormatError';
    }
    return tree;
  })();
  if (typeof streamed === 'string' && typeof treeOrSyntax !== 'string' && STRICTER.test(streamed))
    return false;
  if (typeof streamed === 'string' || typeof treeOrSyntax === 'string') {
    expect(typeof streamed).toBe('string');
    expect(typeof treeOrSyntax).toBe('string');
    return false;
  }
  // Row order may differ: JSON.parse enumerates integer-like keys ("61108") in numeric order,
  // the stream keeps the body's order. The rows, as a set, must be the same.
  expect(sorted(streamed)).toEqual(sorted(treeOrSyntax));
  return true;
}

function sorted(r: ParsedReport): ParsedReport {
  const id = (row: { dims: readonly string[] }) => row.dims.join('\u0000');
  return { ...r, rows: [...r.rows].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)) };
}

const counters = fc.record(
  Object.fromEntries(COUNTERS.map((c) => [c, fc.oneof(fc.nat(1e9), fc.nat(1e9).map(String))])) as Record<
    string,
    fc.Arbitrary<number | string>
  >,
);
const anyText = fc.string({ unit: 'binary', maxLength: 8 });
const dayKey = fc
  .integer({ min: 0, max: 60 })
  .map((n) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10));
const idKey = fc.oneof(fc.nat(1e6).map(String), fc.constantFrom('007', '-1', '1e3', 'x'));

/** Random report-like bodies: nested, rows, and some JSON noise, formatted with random spacing. */
const body = fc
  .record({
    items: fc.oneof(
      fc.dictionary(dayKey, fc.dictionary(anyText, counters, { maxKeys: 4 }), { maxKeys: 4 }),
      fc.dictionary(dayKey, fc.dictionary(idKey, counters, { maxKeys: 4 }), { maxKeys: 4 }),
      fc.array(
        fc
          .tuple(
            fc.record({ day: fc.oneof(dayKey, anyText), campaign_id: fc.oneof(idKey, fc.nat()) }),
            counters,
          )
          .map(([dims, c]) => ({ ...dims, ...c })),
        { maxLength: 5 },
      ),
      fc.jsonValue({ maxDepth: 3 }),
    ),
    totals: fc.oneof(counters, fc.jsonValue({ maxDepth: 2 })),
    extra: fc.jsonValue({ maxDepth: 2 }),
  })
  .chain((doc) => fc.tuple(fc.constant(doc), fc.constantFrom(undefined, 1, '\t', ' \n ')))
  .map(([doc, space]) => JSON.stringify(doc, null, space));

describe('streaming report parser', () => {
  it('agrees with JSON.parse and the tree walk on random bodies', () => {
    let parsed = 0;
    let rows = 0;
    fc.assert(
      fc.property(
        body,
        fc.constantFrom<Dimension[]>(['day'], ['day', 'campaign_id'], ['day', 'domain'], ['campaign_id']),
        (text, dims) => {
          if (!agree(text, dims)) return;
          parsed++;
          rows += parseReport(text, dims).leaves;
        },
      ),
      { numRuns: 1500 },
    );
    // The generator must reach the interesting side too: bodies that parse, with rows.
    expect(parsed).toBeGreaterThan(100);
    expect(rows).toBeGreaterThan(100);
  });

  it('agrees with JSON.parse on damaged bodies: a cut, a deleted or an inserted character', () => {
    const damage = fc.tuple(
      body,
      fc.nat(),
      fc.constantFrom('cut', 'delete', 'insert'),
      fc.constantFrom(...'{}[],:"\\ 0-e.\u0000x'.split('')),
    );
    fc.assert(
      fc.property(damage, ([text, at, how, ch]) => {
        const i = at % (text.length + 1);
        const broken =
          how === 'cut'
            ? text.slice(0, i)
            : how === 'delete'
              ? text.slice(0, i) + text.slice(i + 1)
              : text.slice(0, i) + ch + text.slice(i);
        agree(broken, ['day', 'campaign_id']);
      }),
      { numRuns: 1500 },
    );
  });

  it('decodes escapes, surrogates and UTF-8 in keys and values exactly as JSON.parse', () => {
    const keys = [
      'caf\u00e9',
      '\u65e5\u672c',
      'tab\there',
      'quote"s',
      'back\\slash',
      '\ud83d\ude00',
      'ctl\u0001',
    ];
    const items = Object.fromEntries(
      keys.map((k, i) => [
        k,
        {
          ad_requests: i,
          filled_impressions: 0,
          impressions: 0,
          measurable_impressions: 0,
          viewable_impressions: 0,
        },
      ]),
    );
    const text = JSON.stringify({
      items,
      totals: {
        ad_requests: 21,
        filled_impressions: 0,
        impressions: 0,
        measurable_impressions: 0,
        viewable_impressions: 0,
      },
    });
    const escaped = text.replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    for (const t of [text, escaped]) {
      const r = parseReport(Buffer.from(t), ['domain']);
      expect(r.rows.map((x) => x.dims[0])).toEqual(keys);
    }
  });

  it('reads every JSON number form as JSON.parse does', () => {
    for (const n of [
      '1e3',
      '1.0',
      '1E+2',
      '-0',
      '0',
      '12.50e1',
      '9007199254740991',
      '9007199254740993',
      '-1',
      '1.5',
      '1e400',
    ]) {
      const leaf = `{"ad_requests":${n},"filled_impressions":0,"impressions":0,"measurable_impressions":0,"viewable_impressions":0}`;
      const text = `{"items":{"2026-01-01":${leaf}},"totals":${leaf}}`;
      agree(text, ['day']);
    }
    const r = parseReport(
      '{"items":{"2026-01-01":{"ad_requests":1e3,"filled_impressions":"7","impressions":1.0,"measurable_impressions":0,"viewable_impressions":0}},"totals":{"ad_requests":1000,"filled_impressions":7,"impressions":1,"measurable_impressions":0,"viewable_impressions":0}}',
      ['day'],
    );
    expect(r.rows[0]?.counters).toEqual([1000, 7, 1, 0, 0]);
    expect(r.reconciliation.ok).toBe(true);
  });

  it('rejects a row of counters that also holds a nested object', () => {
    const text =
      '{"items":{"2026-01-01":{"ad_requests":1,"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1,"x":{}}},"totals":{}}';
    expect(() => parseReport(text, ['day'])).toThrow(ReportFormatError);
  });

  it('names an empty body, and a truncated one, in its error', () => {
    expect(() => parseReport('', ['day'])).toThrow(/not valid JSON: an empty body/);
    expect(() => parseReport(' \n', ['day'])).toThrow(/not valid JSON: an empty body/);
    expect(() => parseReport('{"items":{"2026', ['day'])).toThrow(
      /ends early \(truncated\?\) at byte 15 of 15/,
    );
  });

  it('rejects a key given twice in one object, which JSON.parse would silently collapse', () => {
    const leaf =
      '{"ad_requests":1,"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1}';
    const keys = (n: number, twice: number) =>
      Array.from({ length: n }, (_, i) => `"${i + 1}":${leaf}`)
        .concat(`"${twice}":${leaf}`)
        .join(',');
    for (const [n, twice] of [
      [3, 2],
      [20, 17],
    ] as const) {
      const text = `{"items":{"2026-01-01":{${keys(n, twice)}}},"totals":{}}`;
      expect(() => parseReport(text, ['day', 'campaign_id'])).toThrow(
        `at items["2026-01-01"]["${twice}"]: duplicate key: it appears twice in its object`,
      );
    }
  });

  it('rejects data after the report and a repeated items key', () => {
    const ok =
      '{"items":{},"totals":{"ad_requests":0,"filled_impressions":0,"impressions":0,"measurable_impressions":0,"viewable_impressions":0}}';
    expect(parseReport(ok, ['day']).rows).toEqual([]);
    expect(() => parseReport(`${ok} x`, ['day'])).toThrow(/after the end/);
    expect(() => parseReport(ok.replace('{"items":{}', '{"items":{},"items":{}'), ['day'])).toThrow(/twice/);
    expect(() => parseReport('\ufeff' + ok, ['day'])).not.toThrow();
  });
});

describe('a key given twice in any object of the body', () => {
  const C = (n: number) =>
    `"ad_requests":${n},"filled_impressions":${n},"impressions":${n},"measurable_impressions":${n},"viewable_impressions":${n}`;
  const T5 = `{${C(5)}}`;
  /**
   * Each body repeats one key; JSON.parse keeps its last value and every one of these would load,
   * reconciled, with that value. Each must fail naming the key and where it is.
   */
  const CASES: ReadonlyArray<{ kind: string; dims: Dimension[]; text: string; at: string }> = [
    {
      kind: 'totals twice',
      dims: ['day', 'campaign_id'],
      text: `{"items":{"2026-01-01":{"101":{${C(5)}}}},"totals":{${C(1)}},"totals":${T5}}`,
      at: 'totals',
    },
    {
      kind: 'a counter twice in a nested row',
      dims: ['day', 'campaign_id'],
      text: `{"items":{"2026-01-01":{"101":{"ad_requests":1,${C(5)}}}},"totals":${T5}}`,
      at: 'items["2026-01-01"]["101"].ad_requests',
    },
    {
      kind: 'a counter twice, the second spelled with an escape',
      dims: ['day'],
      text: `{"items":{"2026-01-01":{${C(5)},"ad\\u005frequests":5}},"totals":${T5}}`,
      at: 'items["2026-01-01"].ad_requests',
    },
    {
      kind: 'a dimension field twice in a flat row',
      dims: ['day', 'campaign_id'],
      text: `{"items":[{"day":"2026-01-01","campaign_id":101,"campaign_id":102,${C(5)}}],"totals":${T5}}`,
      at: 'items[0].campaign_id',
    },
    {
      kind: 'a field the parser does not read, twice in a row',
      dims: ['day'],
      text: `{"items":{"2026-01-01":{"ctr":0.1,${C(5)},"ctr":0.2}},"totals":${T5}}`,
      at: 'items["2026-01-01"].ctr',
    },
    {
      kind: 'a counter twice inside totals',
      dims: ['day'],
      text: `{"items":{"2026-01-01":{${C(5)}}},"totals":{"impressions":1,${C(5)}}}`,
      at: 'totals.impressions',
    },
    {
      kind: 'a top-level key the parser skips, twice',
      dims: ['day'],
      text: `{"meta":{"page":1},"items":{"2026-01-01":{${C(5)}}},"meta":{"page":2},"totals":${T5}}`,
      at: 'meta',
    },
    {
      kind: 'a key twice deep inside a skipped value',
      dims: ['day'],
      text: `{"meta":{"pages":[{"n":1,"n":2}]},"items":{"2026-01-01":{${C(5)}}},"totals":${T5}}`,
      at: 'meta.pages[0].n',
    },
    {
      kind: 'a dimension key twice (nested)',
      dims: ['day', 'campaign_id'],
      text: `{"items":{"2026-01-01":{"101":{${C(2)}}},"2026-01-01":{"101":{${C(5)}}}},"totals":${T5}}`,
      at: 'items["2026-01-01"]',
    },
  ];

  it.each(CASES)('$kind: JSON.parse would load it, reconciled', ({ text, dims }) => {
    // The premise: the last value wins and reconciles, so nothing downstream would notice.
    const collapsed = parseReportObject(JSON.parse(text), dims);
    expect(collapsed.reconciliation.ok).toBe(true);
  });

  it.each(CASES)('$kind: fails as a malformed body naming the key and where', ({ text, dims, at }) => {
    const error = thrownBy(() => parseReport(text, dims));
    expect(error).toBeInstanceOf(ReportFormatError);
    expect((error as ReportFormatError).path).toBe(at);
    expect((error as Error).message).toContain(`at ${at}: duplicate key: it appears twice in its object`);
  });

  it.each(CASES)('$kind: the streamed path fails the same way in any windowing', async ({ text, dims }) => {
    const expected = `${(thrownBy(() => parseReport(text, dims)) as Error).message}`;
    const bytes = Buffer.from(text);
    for (const windowBytes of [1, 7, 64, bytes.length])
      for (const margin of [0, 1, 16]) {
        const stream = streamReport(chunksOf(bytes, 3), dims, { batch: 1, windowBytes, margin });
        let message = 'no error';
        try {
          for await (const _row of stream.rows);
          stream.summary();
        } catch (error) {
          message = (error as Error).message;
        }
        expect(message, `window ${windowBytes}, margin ${margin}`).toBe(expected);
      }
  });

  it('still reads rows whose fields are all different, however the stream is cut', async () => {
    // Fields the parser skips and rows naming their dimensions: read once, never counted twice
    // when a unit is rewound at a window's end.
    const rows = Array.from(
      { length: 40 },
      (_, i) => `{"day":"2026-01-01","campaign_id":${100 + i},"ctr":0.${i},"name":"c${i}",${C(1)}}`,
    );
    const text = `{"meta":{"a":1,"b":[{"a":1},{"a":2}]},"items":[${rows.join(',')}],"totals":{${C(40)}}}`;
    const whole = parseReport(text, ['day', 'campaign_id']);
    expect(whole.rows).toHaveLength(40);
    expect(whole.reconciliation.ok).toBe(true);
    for (const windowBytes of [1, 5, 33, 200])
      for (const margin of [0, 2, 50]) {
        const stream = streamReport(chunksOf(Buffer.from(text), 11), ['day', 'campaign_id'], {
          batch: 3,
          windowBytes,
          margin,
        });
        const got: unknown[] = [];
        for await (const row of stream.rows) got.push({ ...row, dims: [...row.dims] });
        expect(got).toEqual(whole.rows);
        expect(stream.summary().reconciliation.ok).toBe(true);
      }
  });
});

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** `bytes` as a response's chunks of `size` bytes. */
async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}
