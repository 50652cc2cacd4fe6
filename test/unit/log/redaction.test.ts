import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { redactBuffer, redactCut, redactError, redactSecrets } from '../../../src/log/redact.js';

const KEY = 'sk_live_Zq9#distinctive/key+value';

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
