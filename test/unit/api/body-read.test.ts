import { deflateRawSync, deflateSync, gzipSync, brotliCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { contentCoding, readBody } from '../../../src/api/body.js';

/** A body source like undici's: yields `chunks`, records whether it was destroyed. */
function source(chunks: Buffer[]) {
  const s = {
    destroyed: false,
    read: 0,
    destroy() {
      s.destroyed = true;
    },
    async *[Symbol.asyncIterator]() {
      for (const c of chunks) {
        if (s.destroyed) return;
        s.read++;
        yield c;
      }
    },
  };
  return s;
}

/** `data` cut into pieces of `size` bytes. */
function pieces(data: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) out.push(data.subarray(i, i + size));
  return out;
}

const REPORT = Buffer.from(
  JSON.stringify({ items: { '2026-01-01': { ad_requests: 1 } }, totals: {} }).repeat(50),
);

describe('contentCoding', () => {
  it('names the codings we decode, ignoring case, spaces and identity', () => {
    expect(contentCoding(undefined)).toBe('identity');
    expect(contentCoding('')).toBe('identity');
    expect(contentCoding('identity')).toBe('identity');
    expect(contentCoding(' GZip ')).toBe('gzip');
    expect(contentCoding('x-gzip')).toBe('gzip');
    expect(contentCoding('deflate')).toBe('deflate');
    expect(contentCoding('br')).toBe('br');
    expect(contentCoding(['gzip'])).toBe('gzip');
  });

  it('refuses codings we cannot decode, and stacks of them', () => {
    expect(contentCoding('zstd')).toEqual({ unsupported: 'zstd' });
    expect(contentCoding('gzip, br')).toEqual({ unsupported: 'gzip, br' });
  });
});

describe('readBody', () => {
  it('decodes gzip, zlib deflate, raw deflate and brotli, chunk by chunk', async () => {
    const cases = [
      ['gzip', gzipSync(REPORT)],
      ['deflate', deflateSync(REPORT)],
      ['deflate', deflateRawSync(REPORT)],
      ['br', brotliCompressSync(REPORT)],
    ] as const;
    for (const [coding, wire] of cases) {
      const read = await readBody(source(pieces(wire, 7)), coding, 1_000_000);
      expect(read).toEqual({ kind: 'ok', body: REPORT });
    }
  });

  it('decodes a compressed body too big to take at once (over 16 KB on the wire) as it streams in', async () => {
    // Numbers of a fixed LCG: text that compresses too little to fit 16 KB.
    let x = 1;
    const rows = Array.from({ length: 20_000 }, () => (x = (x * 48_271) % 2_147_483_647));
    const big = Buffer.from(JSON.stringify({ items: rows }));
    for (const [coding, wire] of [
      ['gzip', gzipSync(big)],
      ['deflate', deflateRawSync(big)],
      ['br', brotliCompressSync(big)],
    ] as const) {
      expect(wire.length).toBeGreaterThan(16 * 1024);
      expect(await readBody(source(pieces(wire, 1000)), coding, 1_000_000)).toEqual({
        kind: 'ok',
        body: big,
      });
    }
  });

  it('passes an identity body through, and caps it', async () => {
    expect(await readBody(source(pieces(REPORT, 100)), 'identity', 1_000_000)).toEqual({
      kind: 'ok',
      body: REPORT,
    });
    const s = source(pieces(REPORT, 100));
    const read = await readBody(s, 'identity', 250);
    expect(read.kind).toBe('too-large');
    expect(s.destroyed).toBe(true);
  });

  it('copies a body of announced length into one buffer, and refuses one announced over the cap unread', async () => {
    expect(
      await readBody(source(pieces(REPORT, 100)), 'identity', 1_000_000, { length: REPORT.length }),
    ).toEqual({
      kind: 'ok',
      body: REPORT,
    });
    // A server that sends more than it announced still yields the whole body.
    const longer = await readBody(source(pieces(REPORT, 100)), 'identity', 1_000_000, { length: 150 });
    expect(longer).toEqual({ kind: 'ok', body: REPORT });
    const s = source(pieces(REPORT, 100));
    expect((await readBody(s, 'identity', 250, { length: REPORT.length })).kind).toBe('too-large');
    expect(s.read).toBeLessThanOrEqual(1);
  });

  it('hands a body past streamFrom on as a stream of its decoded chunks, capped', async () => {
    for (const [coding, wire] of [
      ['identity', REPORT],
      ['gzip', gzipSync(REPORT)],
    ] as const) {
      const read = await readBody(source(pieces(wire, 100)), coding, 1_000_000, { streamFrom: 1_000 });
      expect(read.kind).toBe('stream');
      const chunks: Buffer[] = [];
      if (read.kind === 'stream') for await (const c of read.chunks) chunks.push(c);
      expect(Buffer.concat(chunks).equals(REPORT)).toBe(true);
    }
    // Past the cap once streaming: the stream fails, for good.
    const capped = await readBody(source(pieces(REPORT, 100)), 'identity', 2_000, { streamFrom: 1_000 });
    expect(capped.kind).toBe('stream');
    const drained = async () => {
      if (capped.kind === 'stream') for await (const _ of capped.chunks);
    };
    await expect(drained()).rejects.toMatchObject({ name: 'TerminalError', retryable: false });
  });

  it('caps the decompressed size, stopping a small bomb early', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(100_000);
    const s = source(pieces(bomb, 1024));
    const started = performance.now();
    const read = await readBody(s, 'gzip', 1_000_000);
    expect(read.kind).toBe('too-large');
    expect(s.destroyed).toBe(true);
    // Inflating all 64 MB would take far longer than stopping at the first megabyte.
    expect(s.read).toBeLessThan(bomb.length / 1024);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('reports a stream that does not decode, with every byte received', async () => {
    const wire = gzipSync(REPORT);
    const broken = Buffer.concat([
      wire.subarray(0, 40),
      Buffer.from('garbage'.repeat(20)),
      wire.subarray(40),
    ]);
    const read = await readBody(source(pieces(broken, 16)), 'gzip', 1_000_000);
    expect(read).toMatchObject({ kind: 'corrupt', raw: broken });
    const cut = wire.subarray(0, wire.length - 30);
    expect(await readBody(source(pieces(cut, 16)), 'gzip', 1_000_000)).toMatchObject({
      kind: 'corrupt',
      raw: cut,
      detail: expect.stringMatching(/unexpected end of file/),
    });
  });

  it('rethrows a failure of the source itself as the transport error it is', async () => {
    const failing = {
      destroy() {},
      async *[Symbol.asyncIterator]() {
        yield gzipSync(REPORT).subarray(0, 20);
        throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
      },
    };
    await expect(readBody(failing, 'gzip', 1_000_000)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });
});
