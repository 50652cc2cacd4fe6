import { describe, expect, it } from 'vitest';
import { BINARY_HEADER, BINARY_TRAILER, binaryField, copyBinaryChunks } from '../../../src/pull/copy.js';
import { RowValueError } from '../../../src/pull/encode.js';
import type { ReportRow } from '../../../src/flatten/types.js';

const hex = (b: Buffer) => b.toString('hex');

async function encode(
  rows: ReportRow[],
  dimensions: ['day', 'zone_id'] | ['landing_url'],
  chunkBytes?: number,
) {
  const counter = { rows: 0 };
  const chunks: Buffer[] = [];
  const layout = {
    periodStart: '2026-01-01',
    periodEnd: '2026-01-01',
    dimensions,
    loadId: 7,
    account: 'default',
  };
  for await (const c of copyBinaryChunks(rows, layout, counter, chunkBytes)) chunks.push(c);
  return { counter, chunks, all: Buffer.concat(chunks) };
}

describe('binaryField', () => {
  it('writes each type as Postgres binary COPY reads it: length, then the value in network order', () => {
    expect(hex(binaryField('2000-01-01', 'date'))).toBe('00000004' + '00000000');
    expect(hex(binaryField('2000-01-02', 'date'))).toBe('00000004' + '00000001');
    expect(hex(binaryField('1999-12-31', 'date'))).toBe('00000004' + 'ffffffff');
    expect(hex(binaryField('9223372036854775807', 'bigint'))).toBe('00000008' + '7fffffffffffffff');
    expect(hex(binaryField('-1', 'bigint'))).toBe('00000008' + 'ffffffffffffffff');
    expect(hex(binaryField('4294967297', 'bigint'))).toBe('00000008' + '0000000100000001');
    expect(hex(binaryField('-32768', 'smallint'))).toBe('00000002' + '8000');
    expect(hex(binaryField('é\t', 'text'))).toBe('00000003' + 'c3a909');
  });
});

describe('copyBinaryChunks', () => {
  it('frames the rows with the header and the trailer, each row with its field count', async () => {
    const { counter, all } = await encode(
      [{ dims: ['2026-01-01', '5'], counters: [1, 2, 3, 4, 2 ** 53 - 1] }],
      ['day', 'zone_id'],
    );
    expect(counter.rows).toBe(1);
    expect(all.subarray(0, BINARY_HEADER.length)).toEqual(BINARY_HEADER);
    expect(all.subarray(all.length - 2)).toEqual(BINARY_TRAILER);
    const row = all.subarray(BINARY_HEADER.length, all.length - 2);
    // 2 period dates, 2 dimensions, 5 counters, load_id, account ('default': 7 bytes).
    expect(row.readInt16BE(0)).toBe(11);
    expect(row.length).toBe(2 + 8 + 8 + 8 + 12 + 5 * 12 + 12 + 11);
    expect(hex(row.subarray(row.length - 35, row.length - 23))).toBe('00000008' + '001fffffffffffff');
    expect(hex(row.subarray(row.length - 23, row.length - 11))).toBe('00000008' + '0000000000000007');
    expect(row.subarray(row.length - 11).toString('latin1')).toBe('\0\0\0\x07default');
  });

  it('splits into chunks near the size asked, a long value in a chunk of its own size', async () => {
    const long = 'x'.repeat(10_000);
    const rows = Array.from({ length: 50 }, (_, i) => ({
      dims: [i % 10 === 0 ? long : `u${i}`],
      counters: [1, 1, 1, 1, 1],
    }));
    const { chunks, all, counter } = await encode(rows, ['landing_url'], 1024);
    expect(counter.rows).toBe(50);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((c) => c.length <= 10_200)).toBe(true);
    expect(all.subarray(all.length - 2)).toEqual(BINARY_TRAILER);
  });

  it('checks rows as the text encoder does', async () => {
    await expect(
      encode([{ dims: ['2026-01-02', '5'], counters: [1, 1, 1, 1, 1] }], ['day', 'zone_id']),
    ).rejects.toThrow(/outside the period/);
    await expect(
      encode([{ dims: ['2026-01-01', '5x'], counters: [1, 1, 1, 1, 1] }], ['day', 'zone_id']),
    ).rejects.toThrow(RowValueError);
    await expect(
      encode([{ dims: ['a\u0000b'], counters: [1, 1, 1, 1, 1] }], ['landing_url']),
    ).rejects.toThrow(/NUL/);
    await expect(encode([{ dims: ['a'], counters: [1, 1, 1, 1, -1] }], ['landing_url'])).rejects.toThrow(
      /non-negative/,
    );
  });
});
