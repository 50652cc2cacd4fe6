import { COUNTERS } from './types.js';

/**
 * A counter value as a non-negative safe integer, or -1 when it is not one. Accepts JSON integers
 * and strings of decimal digits (some APIs quote large numbers). Rejects fractions, negatives,
 * exponents and values beyond 2^53 - 1, where JSON.parse has already lost precision.
 */
export function counterValue(raw: unknown): number {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw >= 0 ? raw : -1;
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 16) return -1;
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return Number.isSafeInteger(n) ? n : -1;
}

/** True when `node` holds at least one counter: that is what makes it a leaf, whatever its depth. */
export function holdsCounters(node: Record<string, unknown>): boolean {
  for (let i = 0; i < COUNTERS.length; i++) {
    if (node[COUNTERS[i] as string] !== undefined) return true;
  }
  return false;
}
