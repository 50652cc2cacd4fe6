import { describe, expect, it } from 'vitest';
import { isIsoDate } from '../../../src/platform/dates/calendar.js';
import { canonicalDimensionValue } from '../../../src/flatten/rows.js';

describe('canonicalDimensionValue', () => {
  it('accepts real calendar dates only', () => {
    expect(canonicalDimensionValue('date', '2024-02-29')).toBe('2024-02-29');
    expect(canonicalDimensionValue('date', '2023-02-29')).toBeUndefined();
    expect(canonicalDimensionValue('date', '2026-13-01')).toBeUndefined();
    expect(canonicalDimensionValue('date', '2026-04-31')).toBeUndefined();
    expect(canonicalDimensionValue('date', '2026-1-01')).toBeUndefined();
    expect(canonicalDimensionValue('date', '2026-01-01T00:00:00Z')).toBeUndefined();
    expect(canonicalDimensionValue('date', 20260101)).toBeUndefined();
    expect(isIsoDate('1900-02-29')).toBe(false);
    expect(isIsoDate('2000-02-29')).toBe(true);
    expect(isIsoDate('0000-01-01')).toBe(false);
  });

  it('canonicalises bigint ids and rejects values outside int8', () => {
    expect(canonicalDimensionValue('bigint', '862599431')).toBe('862599431');
    expect(canonicalDimensionValue('bigint', '007')).toBe('7');
    expect(canonicalDimensionValue('bigint', '-0')).toBe('0');
    expect(canonicalDimensionValue('bigint', '9223372036854775807')).toBe('9223372036854775807');
    expect(canonicalDimensionValue('bigint', '9223372036854775808')).toBeUndefined();
    expect(canonicalDimensionValue('bigint', '-9223372036854775808')).toBe('-9223372036854775808');
    expect(canonicalDimensionValue('bigint', '-9223372036854775809')).toBeUndefined();
    expect(canonicalDimensionValue('bigint', '12a')).toBeUndefined();
    expect(canonicalDimensionValue('bigint', '')).toBeUndefined();
    expect(canonicalDimensionValue('bigint', '-')).toBeUndefined();
    expect(canonicalDimensionValue('bigint', '+5')).toBeUndefined();
    expect(canonicalDimensionValue('bigint', 42)).toBe('42');
    expect(canonicalDimensionValue('bigint', 2 ** 53)).toBeUndefined();
    expect(canonicalDimensionValue('bigint', 1.5)).toBeUndefined();
    expect(canonicalDimensionValue('bigint', null)).toBeUndefined();
  });

  it('keeps smallint within -32768..32767', () => {
    expect(canonicalDimensionValue('smallint', '10')).toBe('10');
    expect(canonicalDimensionValue('smallint', 3)).toBe('3');
    expect(canonicalDimensionValue('smallint', '-32768')).toBe('-32768');
    expect(canonicalDimensionValue('smallint', '32768')).toBeUndefined();
    expect(canonicalDimensionValue('smallint', '1.0')).toBeUndefined();
    expect(canonicalDimensionValue('smallint', 2.5)).toBeUndefined();
    expect(canonicalDimensionValue('smallint', '')).toBeUndefined();
  });

  it('takes text as is but rejects NUL, lone surrogates and non-scalars', () => {
    expect(canonicalDimensionValue('text', 'Zürich, "CH"')).toBe('Zürich, "CH"');
    expect(canonicalDimensionValue('text', '')).toBe('');
    expect(canonicalDimensionValue('text', 23)).toBe('23');
    expect(canonicalDimensionValue('text', 'a\u0000b')).toBeUndefined();
    expect(canonicalDimensionValue('text', '\ud800')).toBeUndefined();
    expect(canonicalDimensionValue('text', true)).toBeUndefined();
    expect(canonicalDimensionValue('text', null)).toBeUndefined();
    expect(canonicalDimensionValue('text', Infinity)).toBeUndefined();
  });
});
