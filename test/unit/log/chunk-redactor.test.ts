import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReportBody } from '../../../src/api/body.js';
import { ChunkRedactor, redactBuffer } from '../../../src/platform/log/redact.js';

const KEY = 'sk-live-abcdef0123456789';
/** The key as %XX, %xx, \uXXXX and a mix of them, as careless servers write it. */
const ENCODED = [
  [...KEY].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join(''),
  [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''),
  [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`).join(''),
  [...KEY]
    .map((c, i) =>
      i % 3 === 0
        ? c
        : i % 3 === 1
          ? `%${c.charCodeAt(0).toString(16)}`
          : `\\u00${c.charCodeAt(0).toString(16)}`,
    )
    .join(''),
];

describe('ChunkRedactor', () => {
  it('redacts a body in any chunking exactly as redactBuffer redacts it whole', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(
            '{"a":1}',
            KEY,
            encodeURIComponent(`${KEY}/`),
            'x',
            '"',
            '%',
            '\\',
            KEY.slice(0, 5),
            ...ENCODED,
            ...ENCODED.map((e) => e.slice(0, 7)),
          ),
          { maxLength: 30 },
        ),
        fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 20 }),
        (pieces, cuts) => {
          const body = Buffer.from(pieces.join(''));
          const redactor = new ChunkRedactor([KEY]);
          const out: Buffer[] = [];
          let from = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            if (cut <= from || cut > body.length) continue;
            out.push(redactor.push(body.subarray(from, cut)));
            from = cut;
          }
          out.push(redactor.push(body.subarray(from)), redactor.end());
          const joined = Buffer.concat(out);
          expect(joined.toString()).toBe(redactBuffer(body, [KEY]).toString());
          expect(joined.includes(KEY)).toBe(false);
          for (const form of ENCODED) expect(joined.includes(form)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('passes chunks through untouched when there is no secret to look for', () => {
    const redactor = new ChunkRedactor([]);
    const chunk = Buffer.from('{"items":{}}');
    expect(redactor.push(chunk)).toBe(chunk);
    expect(redactor.end().length).toBe(0);
  });

  it('counts the secrets it replaced, across chunks', () => {
    const redactor = new ChunkRedactor([KEY]);
    const body = Buffer.from(`{"a":"${KEY}","b":"${ENCODED[0] ?? ''}"}`);
    redactor.push(body.subarray(0, 10));
    redactor.push(body.subarray(10));
    redactor.end();
    expect(redactor.redactions).toBe(2);
  });
});

describe('ReportBody.redacted', () => {
  const read = async (body: ReportBody) => {
    for await (const _chunk of body);
    return body.redacted;
  };
  async function* chunks(text: string) {
    for (let i = 0; i < text.length; i += 7) yield Buffer.from(text.slice(i, i + 7));
  }

  it('says whether redaction changed the body, whole or streamed: an unchanged one is stored as received', async () => {
    const clean = '{"items":{}}';
    const echoing = `{"key":"${KEY}","items":{}}`;
    expect(await read(new ReportBody(Buffer.from(clean), [KEY]))).toBe(false);
    expect(await read(new ReportBody(Buffer.from(echoing), [KEY]))).toBe(true);
    expect(await read(new ReportBody(chunks(clean), [KEY]))).toBe(false);
    expect(await read(new ReportBody(chunks(echoing), [KEY]))).toBe(true);
  });
});
