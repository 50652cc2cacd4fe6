import { describe, expect, it } from 'vitest';
import { csvChunks, csvField, jsonChunks, reconciliationText } from '../../../src/report/format.js';

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
