// Pure retry policy: which failures are worth another try, and how long to wait before it.

/** Statuses a later attempt can fix. 429 is handled apart (it says when to come back). */
const RETRY_STATUS: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Transport failures a later attempt can fix: resets, refusals, drops and timeouts. */
const RETRY_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/** Failures where the request certainly never reached the server: safe to retry even for POST. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EAI_AGAIN']);

/** True for HTTP statuses in the retry allowlist (500, 502, 503, 504). */
export function isRetryableStatus(status: number): boolean {
  return RETRY_STATUS.has(status);
}

/**
 * True when a transport failure with this code may be retried for this method. POST is not
 * idempotent: once the request may have reached the server, a retry could create a duplicate.
 */
export function isRetryableTransport(code: string | undefined, method: string): boolean {
  if (code === undefined) return false;
  return method === 'POST' ? NOT_SENT_CODES.has(code) : RETRY_CODES.has(code);
}

/**
 * Full-jitter exponential backoff: a uniform random delay in [0, min(cap, base * 2^(retry-1))].
 * `retry` counts from 1 (the wait before the second attempt). Jitter spreads workers that failed
 * together so they do not return together.
 */
export function backoffDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(retry - 1, 0), 40));
  return Math.floor(random() * ceiling);
}

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
