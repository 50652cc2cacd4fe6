import type { DimensionType } from '../config/dimensions.js';
import { digits, isIsoDate } from '../dates/calendar.js';

/** What each column type accepts, in words, for error messages. */
export const EXPECTED: Readonly<Record<DimensionType, string>> = {
  date: 'a date YYYY-MM-DD',
  bigint: 'a decimal integer within bigint range',
  smallint: 'an integer from -32768 to 32767',
  text: 'a string without NUL characters (or a finite number)',
};

const INT8_MAX = '9223372036854775807';
const INT8_MIN_ABS = '9223372036854775808';

/**
 * The canonical text of a dimension value for its column type, or undefined when it does not fit.
 * Accepts an object key (always a string) or a JSON value from a row object (string or number).
 * Canonical: dates as YYYY-MM-DD, integers without leading zeros or sign on zero, text unchanged.
 */
export function canonicalDimensionValue(type: DimensionType, raw: unknown): string | undefined {
  switch (type) {
    case 'date':
      return typeof raw === 'string' && isIsoDate(raw) ? raw : undefined;
    case 'bigint':
      if (typeof raw === 'number') return Number.isSafeInteger(raw) ? String(raw === 0 ? 0 : raw) : undefined;
      return typeof raw === 'string' ? canonicalBigint(raw) : undefined;
    case 'smallint': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? smallIntFromText(raw) : NaN;
      return Number.isInteger(n) && n >= -32768 && n <= 32767 ? String(n === 0 ? 0 : n) : undefined;
    }
    case 'text':
      if (typeof raw === 'string') return raw.includes('\u0000') || !wellFormed(raw) ? undefined : raw;
      return typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
  }
}

/** No lone surrogates: Postgres would reject the text, and a silent U+FFFD would change the key. */
function wellFormed(s: string): boolean {
  // String.prototype.isWellFormed exists on Node 20+, but TypeScript's ES2023 lib lacks its type.
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

function canonicalBigint(s: string): string | undefined {
  const negative = s.charCodeAt(0) === 45;
  const first = negative ? 1 : 0;
  if (first === s.length) return undefined;
  for (let i = first; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  let start = first;
  while (start < s.length - 1 && s.charCodeAt(start) === 48) start++;
  // The common case (positive, no leading zero) returns the key itself: no allocation per value.
  const abs = start === 0 ? s : s.slice(start);
  const limit = negative ? INT8_MIN_ABS : INT8_MAX;
  if (abs.length > limit.length || (abs.length === limit.length && abs > limit)) return undefined;
  if (abs === '0') return '0';
  return negative ? `-${abs}` : abs;
}

function smallIntFromText(s: string): number {
  if (s.length === 0 || s.length > 6) return NaN;
  const negative = s.charCodeAt(0) === 45;
  const n = digits(s, negative ? 1 : 0, s.length);
  if (n < 0 || (negative && s.length === 1)) return NaN;
  return negative ? -n : n;
}
