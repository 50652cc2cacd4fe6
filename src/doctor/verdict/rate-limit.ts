// Row "rate limits": the headers the server sends about its limits, and 429s met while probing.
import type { Row } from '../types.js';

/** True for a header that tells about rate limits: X-RateLimit-*, RateLimit-*, Retry-After. */
export function isRateLimitHeader(name: string): boolean {
  return /^(x-)?ratelimit(-|$)/i.test(name) || /^retry-after$/i.test(name);
}

/** The rate-limit row. */
export function rateLimitVerdict(headers: Readonly<Record<string, string>>, throttled: number): Row {
  const names = Object.keys(headers).sort();
  const seen =
    names.length === 0 ? 'no rate-limit headers seen' : names.map((n) => `${n}: ${headers[n]}`).join(', ');
  if (throttled === 0) return { check: 'rate limits', status: 'info', detail: seen };
  return {
    check: 'rate limits',
    status: 'warn',
    detail:
      `${seen}; ${throttled} answer(s) were 429 and waited out: the key is near its limit, ` +
      'keep ADOPS_RATE_LIMIT (requests per second, all workers) below it',
  };
}
