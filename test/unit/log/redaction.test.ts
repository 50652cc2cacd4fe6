import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/platform/log/logger.js';
import { redactBuffer, redactCut, redactError, redactSecrets } from '../../../src/platform/log/redact.js';
import { mayHoldKey } from '../../../src/platform/log/secret-pattern.js';

const KEY = 'sk_live_Zq9#distinctive/key+value';

const hex = (n: number, width: number, lower: boolean) => {
  const h = n.toString(16).padStart(width, '0');
  return lower ? h : h.toUpperCase();
};
/** Every byte of `key` as %XX (or %xx). */
const percent = (key: string, lower = false) =>
  [...Buffer.from(key, 'utf8')].map((b) => `%${hex(b, 2, lower)}`).join('');
/** Every UTF-16 unit of `key` as \uXXXX (or \uxxxx). */
const unicode = (key: string, lower = false) =>
  Array.from({ length: key.length }, (_, i) => `\\u${hex(key.charCodeAt(i), 4, lower)}`).join('');
/** PHP's json_encode: JSON with every / written \/. */
const phpJson = (key: string) => JSON.stringify(key).slice(1, -1).replace(/\//g, '\\/');
/** Each character in the next of the encodings: raw, %XX, %xx, \uXXXX, \uxxxx. */
const mixed = (key: string) =>
  [...key].map((c, i) => [c, percent(c), percent(c, true), unicode(c), unicode(c, true)][i % 5]).join('');
/** Every way the review found a server writing the key, plus mixes. */
const ENCODINGS: Record<string, (key: string) => string> = {
  'php json_encode (\\/)': phpJson,
  '%XX': (k) => percent(k),
  '%xx': (k) => percent(k, true),
  '\\uXXXX': (k) => unicode(k),
  '\\uxxxx': (k) => unicode(k, true),
  mixed,
  'mixed, shifted': (k) => mixed(`\u0000${k}`).slice(1),
};

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('redaction', () => {
  it('replaces the key in plain, URL-encoded and JSON-escaped forms', () => {
    const text = `a ${KEY} b ${encodeURIComponent(KEY)} c ${JSON.stringify(KEY)}`;
    const out = redactSecrets(text, [KEY]);
    expect(out).not.toContain(KEY);
    expect(out).not.toContain(encodeURIComponent(KEY));
    expect(out.match(/\[REDACTED\]/g)).toHaveLength(3);
  });

  it('finds the key however each character is written: %XX either case, \\uXXXX either case, \\/, mixed', () => {
    for (const [name, encode] of Object.entries(ENCODINGS)) {
      const written = encode(KEY);
      expect(written, name).not.toContain(KEY);
      const text = `{"message":"bad key ${written} (again: ${written})","n":1}`;
      expect(redactSecrets(text, [KEY]), name).toBe(
        '{"message":"bad key [REDACTED] (again: [REDACTED])","n":1}',
      );
      const body = Buffer.from(text);
      expect(redactBuffer(body, [KEY]).toString(), name).toBe(
        '{"message":"bad key [REDACTED] (again: [REDACTED])","n":1}',
      );
    }
  });

  it('finds a key with JSON-escaped, non-ASCII and astral characters in every encoding', () => {
    const odd = 'k"ey\\w/ith\tcafé😀-end';
    const forms = [
      JSON.stringify(odd).slice(1, -1),
      phpJson(odd),
      encodeURIComponent(odd),
      percent(odd, true),
      unicode(odd),
      mixed(odd),
      // A JSON encoder that writes the astral character as a surrogate pair and é as \u00e9.
      JSON.stringify(odd).slice(1, -1).replace('é', '\\u00e9').replace('😀', '\\ud83d\\ude00'),
    ];
    for (const form of forms) {
      expect(redactSecrets(`a ${form} b`, [odd]), form).toBe('a [REDACTED] b');
      expect(redactBuffer(Buffer.from(`a ${form} b`), [odd]).toString(), form).toBe('a [REDACTED] b');
    }
  });

  it('finds the key across the windows a long body is read in, and hands back a clean one untouched', () => {
    // A body is read 1 MiB at a time, the next window starting where the last one's decisions end:
    // a key written near the first window's end is found whichever window decides it.
    const fill = Buffer.alloc(1 << 20, 'x');
    for (const form of [unicode(KEY), mixed(KEY)])
      for (let at = (1 << 20) - form.length - 40; at <= 1 << 20; at += 3) {
        const body = Buffer.concat([fill.subarray(0, at), Buffer.from(form), fill]);
        const out = redactBuffer(body, [KEY]).toString('latin1');
        expect(out.indexOf('[REDACTED]'), `at ${at}`).toBe(at);
        expect(out.length).toBe(body.length - form.length + '[REDACTED]'.length);
      }
    const clean = Buffer.from(`${'{"a":"50% off \\/ caf\\u00e9",'.repeat(100_000)}}`);
    expect(redactBuffer(clean, [KEY])).toBe(clean);
  });

  it('leaves text alone that only looks like an encoding of the key', () => {
    const near = [`${KEY.slice(0, -1)}X`, percent(KEY).replace('%5F', '%5E'), unicode(KEY).slice(0, -1)];
    for (const text of near) expect(redactSecrets(text, [KEY])).toBe(text);
    // Hex digits are case-blind in an escape, letters of the key itself are not.
    expect(redactSecrets(KEY.toUpperCase(), [KEY])).toBe(KEY.toUpperCase());
  });

  it('finds the key inside base64 text at any alignment, e.g. an echoed Basic header', () => {
    for (const user of ['', 'u:', 'ab:', 'abc:']) {
      const basic = Buffer.from(`${user}${KEY}`).toString('base64');
      const out = redactSecrets(`server said: Authorization: Basic ${basic}`, [KEY]);
      expect(out).toContain('[REDACTED]');
      expect(Buffer.from(out.split('Basic ')[1] ?? '', 'base64').toString('latin1')).not.toContain(
        KEY.slice(3, -3),
      );
    }
    // A short secret is not looked for in base64: too likely to match by chance.
    expect(redactSecrets(Buffer.from('abcdefgh').toString('base64'), ['abcdefgh'])).toBe('YWJjZGVmZ2g=');
  });

  it('redacts a body in every form, and hands back the same Buffer when the key is not in it', () => {
    const body = Buffer.from(JSON.stringify({ a: KEY, b: encodeURIComponent(KEY), items: { x: 1 } }));
    const out = redactBuffer(body, [KEY]);
    expect(JSON.parse(out.toString())).toEqual({ a: '[REDACTED]', b: '[REDACTED]', items: { x: 1 } });
    const clean = Buffer.from('{"items":{}}');
    expect(redactBuffer(clean, [KEY])).toBe(clean);
  });

  it('redacts the prefix a cut left of a key, from 4 characters on', () => {
    expect(redactCut(`a ${KEY} b ${KEY.slice(0, 9)}`, [KEY])).toBe('a [REDACTED] b [REDACTED]');
    expect(redactCut(`b ${encodeURIComponent(KEY).slice(0, 14)}`, [KEY])).toBe('b [REDACTED]');
    expect(redactCut(`ends sk_`, [KEY])).toBe('ends sk_');
    for (const [name, encode] of Object.entries(ENCODINGS))
      // From the first character written whole on: a cut inside it (`\\u00`) shows nothing of the key.
      for (const n of [8, 20, encode(KEY).length - 1])
        expect(redactCut(`c ${encode(KEY).slice(0, n)}`, [KEY]), `${name} cut at ${n}`).toBe('c [REDACTED]');
  });

  it('redacts an error and its causes in place, keeping its class', () => {
    class Final extends Error {}
    const cause = new Error(`cause with ${KEY}`);
    const error = new Final(`failed for ${KEY}`, { cause });
    expect(redactError(error, [KEY])).toBe(error);
    expect(error).toBeInstanceOf(Final);
    expect(error.message).toBe('failed for [REDACTED]');
    expect(error.stack).not.toContain(KEY);
    expect(cause.message).toBe('cause with [REDACTED]');
    expect(cause.stack).not.toContain(KEY);
  });

  it('keeps the key out of every captured log line, wherever it was put', () => {
    const out = capture();
    const log = createLogger({ level: 'trace', secrets: [KEY], destination: out.stream, pretty: false });
    log.info({ headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY } }, 'request');
    log.info({ url: `https://h/v2/reports?api_key=${encodeURIComponent(KEY)}` }, 'url');
    log.error({ err: new Error(`upstream said: bad key ${KEY}`) }, 'error with stack');
    log.warn({ job: { data: { note: KEY } } }, `message holding ${KEY}`);
    log.info({ apiKey: KEY }, 'field');
    const text = out.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(5);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(encodeURIComponent(KEY));
    expect(text).toContain('[REDACTED]');
  });

  it('redacts in pretty output too', () => {
    const out = capture();
    const log = createLogger({ level: 'info', secrets: [KEY], destination: out.stream, pretty: true });
    log.info(`key is ${KEY}`);
    expect(out.text()).toContain('key is [REDACTED]');
  });
});

describe('mayHoldKey: values a message must not quote', () => {
  it('flags tokens, hex, UUIDs, base64 and JWTs, and passes words, variable names and ordinary paths', () => {
    for (const key of [
      'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
      'sk-adops-CANARY-8214469c5ab2c6f2f12d398e',
      '550e8400-e29b-41d4-a716-446655440000',
      'dGhpcyBpcyBhIGtleSBvZiBzb21lIHNvcnQ=',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl',
      'abcdefghijklmnopqrstuvwxyz',
    ])
      expect([key, mayHoldKey(key)]).toEqual([key, true]);
    for (const plain of [
      'ADOPS_KEY_NORTH',
      'rate_limit',
      '/run/secrets/adops_api_key',
      '/tmp/adops-key-aB3xQ9/missing-key.txt',
      'https://acme.api.example.com/v2',
      'http://127.0.0.1:8080/v2',
      'Europe/Berlin',
    ])
      expect([plain, mayHoldKey(plain)]).toEqual([plain, false]);
  });
});
