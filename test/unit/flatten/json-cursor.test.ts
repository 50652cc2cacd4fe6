import { describe, expect, it } from 'vitest';
import { JsonCursor } from '../../../src/flatten/json-cursor.js';

/** Each key of `keys` read as the cursor reads an object's keys, by its byte range in one buffer. */
function readKeys(keys: readonly string[]): string[] {
  const body = Buffer.from(keys.map((k) => `"${k}"`).join(' '));
  const c = new JsonCursor(body);
  let at = 0;
  return keys.map((k) => {
    const start = body.indexOf(`"${k}"`, at) + 1;
    at = start + Buffer.byteLength(k) + 1;
    return c.shortKey(start, start + Buffer.byteLength(k));
  });
}

describe('JsonCursor.shortKey', () => {
  it('reads each key as its own text: ids of up to 14 digits (one string each), leading zeros, longer keys', () => {
    const keys = [
      '123456789',
      '0123456789',
      '00123456789',
      '123456789',
      '12345678901234',
      '99999999999999',
      '123456789012345',
      '1234567890123456789',
      '1234567a9',
      'mobile',
      'ünïcode-key',
      '1234567',
      '0001234567',
    ];
    expect(readKeys(keys)).toEqual(keys);
  });
});
