import { describe, expect, it } from 'vitest';
import { bodyBuffer } from '../../../src/emulator/api/http.js';
import { BAD_GATEWAY_PAGE, echoKey, ECHO_FIELD, ECHO_HEADER, keyIn } from '../../../src/emulator/faults.js';
import { describeQuirks, optionsOfFlags, parseEchoPlaces } from '../../../src/emulator/flags.js';
import { ECHO_PLACES, resolveQuirks } from '../../../src/emulator/options.js';

const KEY = 'sk-echo-1234';
const text = (body: unknown) => bodyBuffer({ status: 200, body: body as string }).toString('utf8');

describe('the echoKey quirk', () => {
  it('adds the key as the first member of a 2xx JSON object, streamed or whole, keeping it JSON', () => {
    const whole = echoKey({ status: 200, body: '{"items":[]}' }, KEY, ['body']);
    expect(JSON.parse(text(whole?.body))).toEqual({ [ECHO_FIELD]: KEY, items: [] });
    const empty = echoKey({ status: 200, body: '{}' }, KEY, ['body']);
    expect(JSON.parse(text(empty?.body))).toEqual({ [ECHO_FIELD]: KEY });
    const streamed = echoKey({ status: 200, body: ['{"items":{"a":', '1}}'] }, KEY, ['body']);
    expect(JSON.parse(text(streamed?.body))).toEqual({ [ECHO_FIELD]: KEY, items: { a: 1 } });
  });

  it('puts the key in an error body, an HTML page and a header only where asked', () => {
    const error = { status: 400, body: '{"status":400,"error":"bad_request","message":"no."}' };
    const echoed = JSON.parse(text(echoKey(error, KEY, ['error'])?.body)) as Record<string, string>;
    expect(echoed.message).toBe(`no. (key ${KEY})`);
    expect(echoed[ECHO_FIELD]).toBe(KEY);
    expect(echoKey(error, KEY, ['body'])).toBeUndefined();
    const page = { status: 502, headers: { 'content-type': 'text/html' }, body: BAD_GATEWAY_PAGE };
    expect(text(echoKey(page, KEY, ['html'])?.body)).toMatch(new RegExp(`Bearer ${KEY}</p></body>`));
    expect(echoKey(page, KEY, ['error', 'body'])).toBeUndefined();
    expect(echoKey({ status: 204 }, KEY, ['header'])?.headers?.[ECHO_HEADER]).toBe(KEY);
  });

  it('is off by default and set from --echo-key, naming an unknown place', () => {
    expect(resolveQuirks({}).echoKey).toEqual([]);
    expect(describeQuirks(resolveQuirks({}))).toBe('none');
    expect(parseEchoPlaces('all')).toEqual([...ECHO_PLACES]);
    expect(parseEchoPlaces('header, body,header')).toEqual(['header', 'body']);
    expect(() => parseEchoPlaces('body,footer')).toThrow(
      'unknown echo place "footer": use any of body, error, html, header, or all',
    );
    const { resolved } = optionsOfFlags({ profile: 'faithful', echoKey: ['error'] });
    expect(resolved.echoKey).toEqual(['error']);
    expect(describeQuirks(resolved)).toBe('echoKey=error');
    expect(() => resolveQuirks({ echoKey: ['footer'] } as never)).toThrow(/echoKey/);
  });

  it('writes the key as careless servers do: \\/, %XX, %xx, \\uXXXX, \\uxxxx or a mix, still valid JSON', () => {
    const key = 'sk-a/b';
    expect(keyIn(key, 'json')).toBe('sk-a/b');
    expect(keyIn(key, 'json-slash')).toBe('sk-a\\/b');
    expect(keyIn(key, 'percent')).toBe('%73%6B%2D%61%2F%62');
    expect(keyIn(key, 'percent-lower')).toBe('%73%6b%2d%61%2f%62');
    expect(keyIn(key, 'unicode')).toBe('\\u0073\\u006B\\u002D\\u0061\\u002F\\u0062');
    expect(keyIn(key, 'unicode-lower')).toBe('\\u0073\\u006b\\u002d\\u0061\\u002f\\u0062');
    expect(keyIn(key, 'mixed')).toBe('s%6B%2d\\u0061\\u002fb');
    for (const form of ['json-slash', 'unicode', 'mixed'] as const) {
      const error = { status: 400, body: '{"status":400,"message":"no."}' };
      const echoed = JSON.parse(text(echoKey(error, key, ['error'], form)?.body)) as Record<string, string>;
      expect(echoed.message).toBe(`no. (key ${JSON.parse(`"${keyIn(key, form)}"`) as string})`);
      const body = JSON.parse(text(echoKey({ status: 200, body: '{}' }, key, ['body'], form)?.body));
      expect(body).toEqual({ [ECHO_FIELD]: JSON.parse(`"${keyIn(key, form)}"`) });
    }
    expect(JSON.parse(`"${keyIn(key, 'unicode')}"`)).toBe(key);
    expect(echoKey({ status: 204 }, key, ['header'], 'percent')?.headers?.[ECHO_HEADER]).toBe(
      keyIn(key, 'percent'),
    );
    expect(resolveQuirks({}).echoKeyAs).toBe('json');
    expect(() => resolveQuirks({ echoKeyAs: 'rot13' } as never)).toThrow(/echoKeyAs/);
  });
});
