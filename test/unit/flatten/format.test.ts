import { describe, expect, it } from 'vitest';
import {
  csvChunks,
  csvField,
  formulaSafe,
  jsonChunks,
  reconciliationText,
  terminalSafe,
} from '../../../src/status/format.js';

const rows = [
  { dims: ['2026-01-01', 'a,b'], counters: [1, 2, 3, 4, 5] },
  { dims: ['2026-01-02', 'say "hi"\nbye'], counters: [0, 0, 0, 0, 0] },
];

describe('report output formats', () => {
  it('quotes CSV fields only where RFC 4180 needs it', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField('')).toBe('');
  });

  it('writes a CSV header then one line per row', () => {
    expect([...csvChunks(['day', 'domain'], rows)].join('')).toBe(
      'day,domain,ad_requests,filled_impressions,impressions,measurable_impressions,viewable_impressions\n' +
        '2026-01-01,"a,b",1,2,3,4,5\n' +
        '2026-01-02,"say ""hi""\nbye",0,0,0,0,0\n',
    );
  });

  it('writes JSON that parses back to the rows, also when empty', () => {
    const parsed = JSON.parse([...jsonChunks(['day', 'domain'], rows)].join(''));
    expect(parsed[1]).toEqual({
      day: '2026-01-02',
      domain: 'say "hi"\nbye',
      ad_requests: 0,
      filled_impressions: 0,
      impressions: 0,
      measurable_impressions: 0,
      viewable_impressions: 0,
    });
    expect(JSON.parse([...jsonChunks(['day'], [])].join(''))).toEqual([]);
  });

  it('says where the rows and totals differ', () => {
    expect(reconciliationText({ ok: true, differences: [] })).toContain('ok');
    expect(
      reconciliationText({ ok: false, differences: [{ counter: 'impressions', items: 3, totals: 4 }] }),
    ).toBe('reconciliation: MISMATCH impressions rows=3 totals=4');
  });
});

describe('output safe for terminals and spreadsheets', () => {
  it('escapes C0, DEL, C1 and bidi controls for a terminal, leaving printable text alone', () => {
    expect(terminalSafe('\u001b[31mred\u001b[0m')).toBe('\\x1b[31mred\\x1b[0m');
    expect(terminalSafe('a\nb\rc\td\u0000e\u007f\u0085\u009b')).toBe('a\\nb\\rc\\td\\x00e\\x7f\\x85\\x9b');
    expect(terminalSafe('\u202eabc\u2066\u2028')).toBe('\\u202eabc\\u2066\\u2028');
    expect(terminalSafe('Zürich, 東京 – ok')).toBe('Zürich, 東京 – ok');
  });

  it('puts a quote before cells a spreadsheet would run as formulas, and only those', () => {
    for (const v of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(formulaSafe(v)).toBe(`'${v}`);
    for (const v of ['plain', 'a=b', '', ' =x', "'already"]) expect(formulaSafe(v)).toBe(v);
  });

  it('applies the quote to dimension values in CSV when asked, never to the header or counters', () => {
    const text = [
      ...csvChunks(['domain'], [{ dims: ['=cmd|x'], counters: [1, 2, 3, 4, 5] }], { formulas: 'safe' }),
    ];
    expect(text.join('')).toBe(
      'domain,ad_requests,filled_impressions,impressions,measurable_impressions,viewable_impressions\n' +
        "'=cmd|x,1,2,3,4,5\n",
    );
  });

  it('escapes control characters of CSV values for a terminal, after the formula check saw them', () => {
    const rows = [
      { dims: ['\u001b]0;t\u0007'], counters: [1, 2, 3, 4, 5] },
      { dims: ['\tx\ny'], counters: [1, 2, 3, 4, 5] },
    ];
    const lines = (o: Parameters<typeof csvChunks>[2]) =>
      [...csvChunks(['domain'], rows, o)].join('').split('\n').slice(1, 3);
    expect(lines({ formulas: 'safe', terminal: true })).toEqual([
      '\\x1b]0;t\\x07,1,2,3,4,5',
      "'\\tx\\ny,1,2,3,4,5",
    ]);
    expect(lines({ terminal: true })).toEqual(['\\x1b]0;t\\x07,1,2,3,4,5', '\\tx\\ny,1,2,3,4,5']);
    // Not for a terminal: exact, quoted where CSV needs it.
    expect([...csvChunks(['domain'], rows)].join('')).toContain('\n"\tx\ny",1,2,3,4,5\n');
  });
});
