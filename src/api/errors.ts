// The API client's errors: what failed, after how many attempts, what to do, and whether a retry helps.
import { AdopsError } from '../platform/retry/errors.js';

/** What every API failure carries, so a user (or the queue) can decide what to do. */
export interface ApiErrorDetails {
  readonly status?: number | undefined;
  readonly apiMessage?: string | undefined; // The API's own error message from the body, when it gave one.
  readonly method: string;
  readonly path: string; // Request path with query (never holds the key: that travels in a header).
  readonly attempts: number;
  readonly hint: string;
  /** True when a later retry can succeed (5xx, 429, transport); false for 4xx and bad payloads. */
  readonly retryable: boolean;
  readonly cause?: unknown;
}

/** Which failure an ApiError is: its `name`, which leads the reason a user reads. */
export type ApiFault =
  | 'ApiError'
  | 'ApiHttpError'
  | 'ApiTransportError'
  | 'ApiResponseError'
  | 'RateLimitedError'
  /** The API answered a later page with items already seen: it ignores offset, or loops. */
  | 'ApiPaginationError'
  /** A listing ran past its item cap without a short page: its pages never run out. */
  | 'ApiListingTooLongError';

interface ApiErrorExtras {
  readonly name?: ApiFault;
  readonly retryAfterMs?: number;
  readonly code?: string | undefined;
  readonly excerpt?: string;
  readonly sha256?: string | undefined;
  readonly body?: Buffer | undefined;
}

/** Every error from the API client; `name` says which failure (ApiFault). */
export class ApiError extends AdopsError {
  override name: ApiFault = 'ApiError';
  readonly status: number | undefined;
  readonly apiMessage: string | undefined;
  readonly method: string;
  readonly path: string;
  declare readonly attempts: number;
  declare readonly hint: string;
  /** ApiTransportError: the transport's code, e.g. ECONNRESET or UND_ERR_HEADERS_TIMEOUT. */
  readonly code?: string | undefined;
  /** ApiResponseError: the start of the body, secrets redacted, control characters escaped. */
  readonly excerpt?: string;
  /** ApiResponseError: SHA-256 of a malformed body as received (tells a repeat from a new answer). */
  readonly sha256?: string | undefined;
  /** ApiResponseError: the body as received, for the archive; not enumerable, so no logger prints it. */
  declare readonly body: Buffer | undefined;

  constructor(summary: string, d: ApiErrorDetails & ApiErrorExtras) {
    const said = d.apiMessage === undefined ? '' : `: ${d.apiMessage}`;
    const tries = d.attempts === 1 ? '1 attempt' : `${d.attempts} attempts`;
    super(
      `${d.method} ${d.path}: ${summary}${said} (after ${tries}); ${d.hint}`,
      { cause: d.cause, attempts: d.attempts, hint: d.hint, retryAfterMs: d.retryAfterMs },
      d.retryable,
    );
    if (d.name !== undefined) this.name = d.name;
    this.status = d.status;
    this.apiMessage = d.apiMessage;
    this.method = d.method;
    this.path = d.path;
    if ('code' in d) this.code = d.code;
    if (d.excerpt !== undefined) {
      this.excerpt = d.excerpt;
      this.sha256 = d.sha256;
      Object.defineProperty(this, 'body', { value: d.body, enumerable: false });
    }
  }
}

/** The API answered with an error status (4xx or 5xx). */
export function apiHttpError(d: ApiErrorDetails & { status: number }): ApiError {
  return new ApiError(`HTTP ${d.status}`, { ...d, name: 'ApiHttpError' });
}

/** No usable response: connection refused or reset, dropped mid-body, or a timeout. */
export function apiTransportError(
  d: ApiErrorDetails & { code: string | undefined; detail: string },
): ApiError {
  return new ApiError(`no response (${d.code ?? 'error'}: ${d.detail})`, { ...d, name: 'ApiTransportError' });
}

/** A 2xx with an unusable body: retryable if malformed (until it repeats), not for shape, encoding, cap. */
export function apiResponseError(
  d: ApiErrorDetails & { problem: string; excerpt: string; body?: Buffer; sha256?: string },
): ApiError {
  const summary = `unexpected response body (${d.problem}), starting ${JSON.stringify(d.excerpt)}`;
  return new ApiError(summary, { ...d, name: 'ApiResponseError' });
}

/** HTTP 429 with on429: 'throw' (or a wait longer than allowed): retry after `retryAfterMs`. */
export function rateLimitedError(d: ApiErrorDetails & { retryAfterMs: number }): ApiError {
  const summary = `HTTP 429 rate limited, retry after ${d.retryAfterMs} ms`;
  return new ApiError(summary, { ...d, name: 'RateLimitedError' });
}

/** The accounts-file entry holding a client's server settings; without one, the environment's variables. */
export interface AccountSettings {
  readonly account: string;
  readonly file: string;
}

/** How a hint names setting `key` (an accounts-file field) or, without an account, `variable`. */
function setting(where: AccountSettings | undefined, key: string, variable: string): string {
  return where === undefined ? variable : `${key} of account ${where.account} in ${where.file}`;
}

/** The action a user can take for a status, naming the setting involved (the account's own, with one). */
export function hintFor(status: number, method: string, path: string, where?: AccountSettings): string {
  switch (status) {
    case 400:
      return 'the API rejected the request: check its parameters (dates as YYYY-MM-DD, dimension names, required body fields) against the spec';
    case 401:
      if (where !== undefined)
        return `check api_key_file (or api_key_env) and auth (bearer or x-api-key) of account ${where.account} in ${where.file}; \`adops doctor --account ${where.account}\` shows the header form the API expects`;
      return 'check ADOPS_API_KEY (or ADOPS_API_KEY_FILE) and that ADOPS_AUTH (bearer or x-api-key) is the header form the API expects';
    case 403:
      return `the key lacks the scope, method or IP for this endpoint: use a key allowed ${method} on ${path.split('?')[0]} from this machine's IP address`;
    case 404:
      return `the resource does not exist: check the id, and that ${setting(where, 'base_url', 'ADOPS_BASE_URL')} is the account URL ending in /v2`;
    case 429:
      return `the API is rate limiting: lower ${setting(where, 'rate_limit', 'ADOPS_RATE_LIMIT')} or run fewer workers`;
    default:
      if (status >= 300 && status < 400)
        return `the API redirected the request: set ${setting(where, 'base_url', 'ADOPS_BASE_URL')} to the final address (https, ending in /v2)`;
      return status >= 500
        ? 'the API is failing: retry later; ADOPS_HTTP_ATTEMPTS sets how many tries a request gets'
        : 'the API refused the request: check it against the spec';
  }
}

/** The hint for a request that got no response, naming the account's base_url when it has one. */
export function transportHint(where: AccountSettings | undefined): string {
  return `check ${setting(where, 'base_url', 'ADOPS_BASE_URL')} and the network; ADOPS_HTTP_CONNECT_TIMEOUT_MS, ADOPS_HTTP_HEADERS_TIMEOUT_MS, ADOPS_HTTP_BODY_TIMEOUT_MS and ADOPS_HTTP_REQUEST_TIMEOUT_MS set the timeouts, ADOPS_HTTP_ATTEMPTS the tries`;
}

/** The hint for a malformed success body that may come right next time. */
export const MALFORMED_HINT =
  'the API (or a proxy in front of it) sent a broken body; it is retried like a 5xx, and fails for good only when the same body comes twice in a row';

/** The hint for the same malformed body twice in a row. */
export const REPEATED_HINT =
  'the API sent the same broken body twice in a row: check ADOPS_BASE_URL points at the management API (…/v2), and report the excerpt if it does';

/** The hint for a success status with a body we cannot use. */
export const RESPONSE_HINT =
  'the API answered with an unexpected body: check ADOPS_BASE_URL points at the management API (…/v2), and report the excerpt if it does';
