import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyChunks, createRowEncoder, encodeDimension, escapeCopyText } from '../../../src/pull/encode.js';
import { RowValueError } from '../../../src/pull/encode.js';
import type { ReportRow } from '../../../src/flatten/types.js';

/** Postgres' reading of one COPY text-format field (the escapes it documents), for round trips. */
function decodeField(field: string): string {
  const map: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
  return field.replace(/\\(.)/gs, (_, c: string) => map[c] ?? c);
}

/** Splits one encoded line into decoded fields the way Postgres does: on raw tabs only. */
function decodeLine(line: string): string[] {
  expect(line.endsWith('\n')).toBe(true);
  return line.slice(0, -1).split('\t').map(decodeField);
}

describe('escapeCopyText', () => {
  it.each([
    ['tab', 'a\tb', 'a\\tb'],
    ['newline', 'a\nb', 'a\\nb'],
    ['carriage return', 'a\r\nb', 'a\\r\\nb'],
    ['backslash', 'C:\\path\\N', 'C:\\\\path\\\\N'],
    ['end-of-data marker', '\\.', '\\\\.'],
    ['the NULL marker as text', '\\N', '\\\\N'],
  ])('escapes a %s', (_name, input, expected) => {
    expect(escapeCopyText(input)).toBe(expected);
  });

  it('leaves quotes, commas, semicolons and unicode literal', () => {
    const value = `"quoted", 'single'; é 漢字 🎉 \u200b \u00a0 \b\f\v`;
    expect(escapeCopyText(value)).toBe(value);
  });

  it('refuses a NUL character, naming the dimension', () => {
    expect(() => escapeCopyText('a\u0000b', 'domain')).toThrow(RowValueError);
    expect(() => escapeCopyText('a\u0000b', 'domain')).toThrow(/domain .*NUL/);
  });

  it('refuses an unpaired surrogate but keeps a paired one', () => {
    expect(() => escapeCopyText('x\ud800y', 'city')).toThrow(/unpaired/);
    expect(escapeCopyText('\ud83c\udf89')).toBe('🎉');
  });

  it('round-trips any NUL-free, well-formed string through Postgres text escapes', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 200 });
    const nasty = fc.array(fc.constantFrom('\\', '\t', '\n', '\r', '"', ',', "'", '\\N', '\\.', 'é', '🎉'), {
      maxLength: 30,
    });
    fc.assert(
      fc.property(
        fc.oneof(
          text,
          nasty.map((a) => a.join('')),
        ),
        (raw) => {
          const value = raw.split('\u0000').join('');
          const escaped = escapeCopyText(value);
          expect(escaped).not.toMatch(/[\t\n\r]/);
          expect(decodeField(escaped)).toBe(value);
        },
      ),
    );
  });

  it('handles a 1 MB value with specials in one pass', () => {
    const value = 'ab\t\\\n'.repeat(200_000);
    expect(decodeField(escapeCopyText(value))).toBe(value);
  });
});

describe('encodeDimension', () => {
  it('accepts typed values in their canonical form', () => {
    expect(encodeDimension('2026-02-28', 'day', 'date')).toBe('2026-02-28');
    expect(encodeDimension('9223372036854775807', 'campaign_id', 'bigint')).toBe('9223372036854775807');
    expect(encodeDimension('-32768', 'tier', 'smallint')).toBe('-32768');
  });

  it.each([
    ['day', '2026-02-30', 'date'],
    ['day', '20260101', 'date'],
    ['campaign_id', '9223372036854775808', 'bigint'],
    ['campaign_id', '12a', 'bigint'],
    ['campaign_id', '', 'bigint'],
    ['tier', '32768', 'smallint'],
  ] as const)('refuses %s value %j for a %s column, naming dimension and value', (dim, value, type) => {
    expect(() => encodeDimension(value, dim, type)).toThrow(RowValueError);
    try {
      encodeDimension(value, dim, type);
    } catch (error) {
      expect((error as RowValueError).dimension).toBe(dim);
      expect((error as RowValueError).value).toBe(value);
      expect((error as Error).message).toContain(dim);
    }
  });

  it('knows real calendar dates', () => {
    expect(encodeDimension('2024-02-29', 'day', 'date')).toBe('2024-02-29');
    expect(() => encodeDimension('2025-02-29', 'day', 'date')).toThrow(RowValueError);
  });
});

describe('createRowEncoder', () => {
  const encode = createRowEncoder({
    periodStart: '2026-01-01',
    periodEnd: '2026-01-01',
    dimensions: ['day', 'campaign_id', 'landing_url'],
    loadId: 42,
    account: 'north',
  });

  it('writes period, dimensions, counters, load_id and account in column order', () => {
    const line = encode({ dims: ['2026-01-01', '862599431', 'http://x/?a=1\tb'], counters: [1, 2, 3, 4, 5] });
    expect(line).toBe(
      '2026-01-01\t2026-01-01\t2026-01-01\t862599431\thttp://x/?a=1\\tb\t1\t2\t3\t4\t5\t42\tnorth\n',
    );
    expect(decodeLine(line)[4]).toBe('http://x/?a=1\tb');
  });

  it('writes counters above 2^31 and up to 2^53 - 1 digit for digit', () => {
    const line = encode({
      dims: ['2026-01-01', '1', 'u'],
      counters: [2 ** 31, 2 ** 32 + 7, 2 ** 53 - 1, 0, 3_000_000_000],
    });
    expect(decodeLine(line).slice(5, 10)).toEqual([
      '2147483648',
      '4294967303',
      '9007199254740991',
      '0',
      '3000000000',
    ]);
  });

  it.each([
    ['a negative counter', { dims: ['2026-01-01', '1', 'u'], counters: [-1, 0, 0, 0, 0] }],
    ['an unsafe counter', { dims: ['2026-01-01', '1', 'u'], counters: [2 ** 53, 0, 0, 0, 0] }],
    ['a fractional counter', { dims: ['2026-01-01', '1', 'u'], counters: [1.5, 0, 0, 0, 0] }],
    ['too few dimensions', { dims: ['2026-01-01', '1'], counters: [0, 0, 0, 0, 0] }],
    ['too few counters', { dims: ['2026-01-01', '1', 'u'], counters: [0, 0, 0, 0] }],
  ])('refuses %s', (_name, row) => {
    expect(() => encode(row)).toThrow(RowValueError);
  });

  it('still checks and escapes every value when rows repeat the previous value', () => {
    const row = { dims: ['2026-01-01', '7', 'a\tb'], counters: [0, 0, 0, 0, 0] };
    expect(encode(row)).toBe(encode(row));
    expect(encode(row)).toContain('a\\tb');
    expect(() => encode({ ...row, dims: ['2026-01-01', '7x', 'a\tb'] })).toThrow(RowValueError);
    expect(() => encode({ ...row, dims: ['2026-01-32', '7', 'a\tb'] })).toThrow(RowValueError);
  });

  it('refuses a day outside the period, which would double-count under another period', () => {
    expect(() => encode({ dims: ['2026-01-02', '1', 'u'], counters: [0, 0, 0, 0, 0] })).toThrow(
      /day value "2026-01-02" is outside the period 2026-01-01\.\.2026-01-01/,
    );
    const week = createRowEncoder({
      periodStart: '2026-01-05',
      periodEnd: '2026-01-11',
      dimensions: ['day'],
      loadId: 1,
      account: 'default',
    });
    expect(week({ dims: ['2026-01-11'], counters: [0, 0, 0, 0, 0] })).toMatch(
      /^2026-01-05\t2026-01-11\t2026-01-11\t/,
    );
    expect(() => week({ dims: ['2026-01-04'], counters: [0, 0, 0, 0, 0] })).toThrow(RowValueError);
  });

  it('refuses an account that is not a name, since it goes into COPY unescaped', () => {
    expect(() =>
      createRowEncoder({
        periodStart: '2026-01-01',
        periodEnd: '2026-01-01',
        dimensions: [],
        loadId: 1,
        account: 'a\tb',
      }),
    ).toThrow(/account "a\\tb" is not an account name/);
  });

  it('refuses a period that is not a date', () => {
    expect(() =>
      createRowEncoder({
        periodStart: '2026-13-01',
        periodEnd: '2026-01-01',
        dimensions: [],
        loadId: 1,
        account: 'default',
      }),
    ).toThrow(/period_start/);
  });
});

describe('copyChunks', () => {
  const encode = (row: ReportRow) => `${row.dims.join('\t')}\n`;

  it('writes many rows per chunk, and every row exactly once in order', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ dims: [`row${i}`], counters: [] }));
    const counter = { rows: 0 };
    const chunks: Buffer[] = [];
    for await (const chunk of copyChunks(rows, encode, counter, 16 * 1024)) chunks.push(chunk);
    expect(counter.rows).toBe(10_000);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(20);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(rows.map(encode).join(''));
  });

  it('yields nothing for no rows', async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of copyChunks([], encode, { rows: 0 })) chunks.push(chunk);
    expect(chunks).toEqual([]);
  });

  it('encodes multi-byte characters as UTF-8', async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of copyChunks([{ dims: ['漢🎉'], counters: [] }], encode, { rows: 0 }))
      chunks.push(chunk);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from('漢🎉\n', 'utf8'));
  });
});
