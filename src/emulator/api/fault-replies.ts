import { ApiError } from './errors.js';
import type { Reply } from './http.js';

/** A body no JSON parser accepts: what a broken proxy in front of an API might send. */
export const MALFORMED_BODY = '{"items": {"2024-01-01": {"ad_requests": 12,, <html>502 Bad Gateway</html>';

/** The answer of a fault that replaces the handler entirely (500, 429, malformed 200). */
export function injectedReply(kind: 'fail' | 'rate_limit' | 'malformed', retryAfterSeconds: number): Reply {
  if (kind === 'fail')
    return new ApiError(500, 'server_error', 'Injected server error: retry later.').toReply();
  if (kind === 'malformed') return { status: 200, body: MALFORMED_BODY };
  const reply = new ApiError(429, 'rate_limited', 'Too many requests: wait Retry-After seconds.').toReply();
  return { ...reply, headers: { 'retry-after': String(retryAfterSeconds) } };
}
