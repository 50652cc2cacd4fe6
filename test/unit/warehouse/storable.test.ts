import { describe, expect, it } from 'vitest';
import { storableJson, storableText } from '../../../src/warehouse/catalogue/rows.js';

describe('storableText', () => {
  it('removes NULs and replaces each unpaired surrogate with U+FFFD, keeping pairs and other text', () => {
    expect(storableText('a\u0000b\u0000')).toBe('ab');
    expect(storableText('\udc00x\ud83d')).toBe('\ufffdx\ufffd');
    expect(storableText('\ud83d\ude00 é \t\n')).toBe('\ud83d\ude00 é \t\n');
    const plain = 'plain';
    expect(storableText(plain)).toBe(plain);
  });
});

describe('storableJson', () => {
  it('keeps the first value when a repaired key meets an existing one, and __proto__ as a key', () => {
    const parsed = JSON.parse('{"a":1,"a\\u0000":2,"__proto__":{"x":"\\u0000"}}') as Record<string, unknown>;
    const paths: string[] = [];
    const stored = storableJson(parsed, (path) => paths.push(path)) as Record<string, unknown>;
    expect(Object.keys(stored)).toEqual(['a', '__proto__']);
    expect(stored.a).toBe(1);
    expect(Object.getOwnPropertyDescriptor(stored, '__proto__')?.value).toEqual({ x: '' });
    expect(paths).toEqual(['a', '__proto__.x']);
    // What Postgres refused before is now JSON it takes: no \u0000, no lone surrogate escapes.
    expect(JSON.stringify(storableJson(['\udc00', { k: 'v\u0000' }]))).toBe('["\ufffd",{"k":"v"}]');
  });
});
