import { deflateRawSync, deflateSync, gzipSync, brotliCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { contentCoding, readBody } from '../../../src/api/decode.js';

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
      await readBody(source(pieces(REPORT, 100)), 'identity', 1_000_000, undefined, REPORT.length),
    ).toEqual({
      kind: 'ok',
      body: REPORT,
    });
    // A server that sends more than it announced still yields the whole body.
    const longer = await readBody(source(pieces(REPORT, 100)), 'identity', 1_000_000, undefined, 150);
    expect(longer).toEqual({ kind: 'ok', body: REPORT });
    const s = source(pieces(REPORT, 100));
    expect((await readBody(s, 'identity', 250, undefined, REPORT.length)).kind).toBe('too-large');
    expect(s.read).toBeLessThanOrEqual(1);
  });

  it('waits once for the big-body gate when the body reaches its size, then reads on', async () => {
    for (const [coding, wire] of [
      ['identity', REPORT],
      ['gzip', gzipSync(REPORT)],
    ] as const) {
      const s = source(pieces(wire, 100));
      let waits = 0;
      let readAtWait = 0;
      const big = {
        bytes: 1_000,
        wait: async () => {
          waits++;
          readAtWait = s.read;
        },
      };
      expect(await readBody(s, coding, 1_000_000, big)).toEqual({ kind: 'ok', body: REPORT });
      expect(waits).toBe(1);
      // Read on after the wait (an identity body is checked chunk by chunk; gzip here is one chunk).
      if (coding === 'identity') expect(readAtWait).toBeLessThan(s.read);
    }
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
