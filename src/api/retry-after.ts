// Reading a 429's Retry-After header: pure.

/**
 * Milliseconds a Retry-After header asks to wait: delta-seconds or an HTTP date (RFC 9110),
 * never negative; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  // An HTTP date names its day and month; without letters Date.parse would read '-1' as a year.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
