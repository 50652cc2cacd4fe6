import { ApiError } from './errors.js';
import type { Reply } from './http.js';

/** A body no JSON parser accepts: what a broken proxy in front of an API might send. */
export const MALFORMED_BODY = '{"items": {"2024-01-01": {"ad_requests": 12,, <html>502 Bad Gateway</html>';

/** The page a reverse proxy (nginx here) sends when the API behind it fails: HTML, not JSON. */
export const BAD_GATEWAY_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n' +
  '<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** The faults that replace the handler's answer entirely. */
export type ReplacingFault = 'fail' | 'html_fail' | 'rate_limit' | 'storm' | 'malformed';

/** The answer of a fault that replaces the handler entirely (500 or HTML 502, 429, malformed 200). */
export function injectedReply(kind: ReplacingFault, retryAfterSeconds: number): Reply {
  if (kind === 'fail')
    return new ApiError(500, 'server_error', 'Injected server error: retry later.').toReply();
  if (kind === 'html_fail')
    return { status: 502, headers: { 'content-type': 'text/html' }, body: BAD_GATEWAY_PAGE };
  if (kind === 'malformed') return { status: 200, body: MALFORMED_BODY };
  const reply = new ApiError(429, 'rate_limited', 'Too many requests: wait Retry-After seconds.').toReply();
  return { ...reply, headers: { 'retry-after': String(retryAfterSeconds) } };
}
