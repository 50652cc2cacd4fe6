// The settings whose right value depends on the server an account talks to (how it wants auth and
// report parameters sent, whether it compresses, how fast and how many at once it may be asked, how
// slow it may be): each is a field of the accounts file, defaulting to its environment variable.
// Settings of this deployment rather than of a server (attempts, backoff, body sizes, the queue)
// are not here: they stay one per process.

/** The GET /reports parameter forms (ADOPS_REPORT_PARAMS, an account's `report_params`). */
export const REPORT_PARAMS = ['repeat', 'brackets', 'comma', 'json-body'] as const;
/** What a client asks the server for (ADOPS_HTTP_COMPRESSION, an account's `compression`). */
export const COMPRESSIONS = ['gzip', 'none'] as const;
/** The auth header forms (ADOPS_AUTH, an account's `auth`). */
export const AUTH_FORMS = ['bearer', 'x-api-key'] as const;

/**
 * The settings whose right value depends on the server an account talks to: each is per account
 * in the accounts file and defaults to its environment variable (SERVER_FIELDS).
 */
export interface ServerSettings {
  readonly auth: (typeof AUTH_FORMS)[number];
  /** How GET /reports sends its parameters (src/api/query.ts). */
  readonly reportParams: (typeof REPORT_PARAMS)[number];
  /** 'gzip': ask for gzip and decompress while streaming; 'none': ask for the identity encoding. */
  readonly compression: (typeof COMPRESSIONS)[number];
  /** API requests per second to this account, across all workers. */
  readonly rateLimitPerSecond: number;
  /** Keep-alive connections to the server, per worker process. */
  readonly connections: number;
  /** Time the server may take to the response headers (a big report takes a slow server a while). */
  readonly headersTimeoutMs: number;
  /** Longest silence the server may leave between body chunks. */
  readonly bodyTimeoutMs: number;
}

/** One accounts-file field of ServerSettings: the variable it defaults to, and what it accepts. */
export interface ServerField {
  readonly setting: keyof ServerSettings;
  readonly env: string;
  /** The values allowed, for a choice. */
  readonly oneOf?: readonly string[];
  /** The whole numbers allowed, for a number: from, to, and what they count. */
  readonly range?: readonly [number, number, string];
}

/** Every accounts-file field of ServerSettings, in the order the docs and doctor list them. */
export const SERVER_FIELDS = {
  auth: { setting: 'auth', env: 'ADOPS_AUTH', oneOf: AUTH_FORMS },
  report_params: { setting: 'reportParams', env: 'ADOPS_REPORT_PARAMS', oneOf: REPORT_PARAMS },
  compression: { setting: 'compression', env: 'ADOPS_HTTP_COMPRESSION', oneOf: COMPRESSIONS },
  rate_limit: {
    setting: 'rateLimitPerSecond',
    env: 'ADOPS_RATE_LIMIT',
    range: [1, 100_000, 'requests per second'],
  },
  connections: { setting: 'connections', env: 'ADOPS_HTTP_CONNECTIONS', range: [1, 1024, 'connections'] },
  headers_timeout_ms: {
    setting: 'headersTimeoutMs',
    env: 'ADOPS_HTTP_HEADERS_TIMEOUT_MS',
    range: [1, 3_600_000, 'milliseconds'],
  },
  body_timeout_ms: {
    setting: 'bodyTimeoutMs',
    env: 'ADOPS_HTTP_BODY_TIMEOUT_MS',
    range: [1, 3_600_000, 'milliseconds'],
  },
} as const satisfies Readonly<Record<string, ServerField>>;

/** `value` if `spec` allows it; else `fail` with what it allows. */
export function checkServerValue(
  value: unknown,
  spec: ServerField,
  fail: (message: string) => never,
): unknown {
  if (spec.oneOf !== undefined) {
    if (typeof value !== 'string' || !spec.oneOf.includes(value))
      fail(`expected one of: ${spec.oneOf.join(', ')}`);
  } else if (spec.range !== undefined) {
    const [min, max, unit] = spec.range;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      fail(`expected a whole number of ${unit} from ${min} to ${max}`);
  }
  return value;
}
