// The environment, validated once into the frozen Config every part receives: each variable of the
// design checked with what it allows, the API key (direct or from a file), the webhook secret and
// the accounts; messages name the variable and never echo a secret or a password.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  BASE_URL_FORM,
  baseUrlProblem,
  DATABASE_URL_FORM,
  postgresUrlProblem,
  REDIS_URL_FORM,
  redisUrlProblem,
  withoutPassword,
  isSentinelUrl,
  queuePrefixOn,
  readRedisTarget,
  REDIS_HA_VARS,
  SENTINEL_URL_FORM,
  sentinelUrlProblem,
  type RedisTarget,
} from './connections.js';
import { FileRefused, readBoundedFile, ConfigError } from './files.js';
import {
  envAccount,
  readAccountsFile,
  type Account,
  AUTH_FORMS,
  COMPRESSIONS,
  REPORT_PARAMS,
  SERVER_FIELDS,
  type ServerSettings,
} from './accounts.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/** Bytes a key file may hold: a key is tens of bytes; anything near this is the wrong file. */
const MAX_KEY_FILE_BYTES = 64 * 1024;
/** A schema name ADOPS_SCHEMA (or a flag naming a schema) may take: a lower-case SQL identifier. */
export const SCHEMA_NAME = IDENTIFIER;
/**
 * Schemas that are Postgres' own: `pg_*` names are reserved to the system (pg_catalog, pg_toast,
 * each session's pg_temp) and information_schema is the standard's catalogue.
 */
export const SYSTEM_SCHEMA = /^(pg_.*|information_schema)$/;
/** Why a schema name cannot be ours, for messages of ADOPS_SCHEMA and of flags naming a schema. */
export const SYSTEM_SCHEMA_PROBLEM =
  "a schema of our own: pg_* and information_schema are Postgres' own schemas";
/** A BullMQ key prefix ADOPS_QUEUE_PREFIX (or a flag naming a prefix) may take. */
export const QUEUE_PREFIX = /^[A-Za-z0-9_.:-]{1,100}$/;

/** The validated, frozen configuration every part receives. Secrets live only in `apiKey` and `webhook.secret`. */
export interface Config {
  /** API base URL ending in /v2; undefined means "only `adops demo` may run" (it embeds the emulator). */
  readonly baseUrl: string | undefined;
  /** The API key; never log it, never put it in Redis or Postgres. */
  readonly apiKey: string | undefined;
  readonly auth: ServerSettings['auth'];
  /** How GET /reports sends its parameters (the spec leaves it open): see src/api/query.ts. */
  readonly reportParams: ServerSettings['reportParams'];
  /** Postgres connection string; undefined lets libpq PG* variables and the local socket apply. */
  readonly databaseUrl: string | undefined;
  /** REDIS_URL as given (or its default); `redis` says which Redis is really used. */
  readonly redisUrl: string;
  /** The Redis the queues live on: one server, a Sentinel-managed master, or a Cluster. Holds passwords. */
  readonly redis: RedisTarget;
  /** Postgres schema for all tables (validated identifier). */
  readonly schema: string;
  readonly jobsDir: string;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly http: {
    readonly connectTimeoutMs: number;
    readonly headersTimeoutMs: number;
    readonly bodyTimeoutMs: number;
    /**
     * Deadline of one request, from sending it to the last byte of its body, streamed bodies
     * included (ADOPS_HTTP_REQUEST_TIMEOUT_MS): a server dripping a body never trips the body
     * timeout, which is the silence between chunks.
     */
    readonly requestTimeoutMs: number;
    /** Attempts per request, the first included. */
    readonly attempts: number;
    /** Cap of the exponential backoff between attempts. */
    readonly maxBackoffMs: number;
    /**
     * Longest pause a server's Retry-After can impose (ADOPS_MAX_RETRY_AFTER_SECONDS): a longer one
     * is cut to it, with a warning naming what the server asked.
     */
    readonly retryAfterCapMs: number;
    /** Keep-alive connections per API origin. */
    readonly connections: number;
    /** 'gzip': ask for gzip and decompress while streaming; 'none': ask for the identity encoding. */
    readonly compression: ServerSettings['compression'];
    /** Largest report body read, in MB (1,000,000 bytes) decompressed: a worker holds a body whole. */
    readonly maxBodyMb: number;
    /** Report bodies from this size on are loaded as they stream in, never held whole. */
    readonly streamBodyMb: number;
  };
  readonly queue: {
    /** Where the queues live (ADOPS_QUEUE): BullMQ on Redis, or BullMQ's PostgreSQL backend. */
    readonly backend: 'redis' | 'postgres';
    /**
     * The schema of the Postgres queues, in DATABASE_URL's database: `<ADOPS_SCHEMA>_queue`, and
     * with an ADOPS_QUEUE_PREFIX other than the default a hash of it appended (the prefix isolates
     * deployments and test runs there as it does on Redis).
     */
    readonly schema: string;
    /**
     * BullMQ key prefix in Redis; isolates deployments (and test runs) sharing one Redis. On a
     * Cluster it is ADOPS_QUEUE_PREFIX in braces, a hash tag, so every key of ours shares one slot.
     */
    readonly prefix: string;
    /** Attempts of a pull job, the first included. */
    readonly pullAttempts: number;
    /** Attempts per API request of a catalogue sync against transient faults (429s not counted). */
    readonly syncAttempts: number;
    /** API requests per second across all workers. */
    readonly rateLimitPerSecond: number;
    /** Seconds a worker waits for running jobs on SIGTERM/SIGINT. */
    readonly shutdownTimeoutSeconds: number;
    /**
     * Seconds a waiting command (`backfill`, `heal` and `sync --wait`) rides out a Redis that
     * cannot be reached before it gives up, telling to finish with `adops heal`.
     */
    readonly redisOutageSeconds: number;
  };
  /** Days the scheduler and heal look back for missing or failed periods. */
  readonly healDays: number;
  /** Days a raw response body is kept in report_raw. */
  readonly rawRetentionDays: number;
  /** Port of the worker's /metrics and /health endpoints; 0 disables them. */
  readonly metricsPort: number;
  /** Address the metrics server listens on: loopback unless a deployment opens it on purpose. */
  readonly metricsHost: string;
  /** COPY's data format for report rows: binary, or text as the fallback. */
  readonly copyFormat: 'binary' | 'text';
  /** Where signed JSON events go (src/webhooks/delivery.ts); undefined: no webhooks. */
  readonly webhook: WebhookConfig | undefined;
  /**
   * The ad server accounts pulled (src/config/accounts.ts): those of ADOPS_ACCOUNTS_FILE, or the
   * env settings above as the one account `default`. Never empty.
   */
  readonly accounts: readonly Account[];
  /** ADOPS_ACCOUNTS_FILE, when the accounts come from one. */
  readonly accountsFile: string | undefined;
}

/** The webhook endpoint and the secret its events are signed with (never logged, never in Redis). */
export interface WebhookConfig {
  readonly url: string;
  /** A Standard Webhooks secret, `whsec_<base64 of 24 to 64 bytes>`. */
  readonly secret: string;
}

type Env = Readonly<Record<string, string | undefined>>;

const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `at least ${min}`).max(max, `at most ${max}`));

/** A connection URL checked in full: the issue reads `<form>: <what is wrong>`. */
const checkedUrl = (form: string, problem: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const found = problem(value);
    if (found !== undefined) ctx.addIssue({ code: 'custom', message: `${form}: ${found}` });
  });

/** The bounds of a numeric server setting: the variable and the accounts-file field share them. */
const rangeOf = (field: { readonly range: readonly [number, number, string] }): [number, number] => [
  field.range[0],
  field.range[1],
];

const ENV_SCHEMA = {
  ADOPS_BASE_URL: checkedUrl(BASE_URL_FORM, baseUrlProblem)
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  ADOPS_AUTH: z.enum(AUTH_FORMS, `one of: ${AUTH_FORMS.join(', ')}`).default('bearer'),
  ADOPS_REPORT_PARAMS: z.enum(REPORT_PARAMS, `one of: ${REPORT_PARAMS.join(', ')}`).default('repeat'),
  DATABASE_URL: checkedUrl(DATABASE_URL_FORM, postgresUrlProblem).optional(),
  REDIS_URL: z
    .string()
    .superRefine((value, ctx) => {
      const sentinel = isSentinelUrl(value);
      const found = sentinel ? sentinelUrlProblem(value) : redisUrlProblem(value);
      if (found !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: `${sentinel ? SENTINEL_URL_FORM : REDIS_URL_FORM}: ${found}`,
        });
    })
    .default('redis://127.0.0.1:6379'),
  ADOPS_SCHEMA: z
    .string()
    .regex(IDENTIFIER, 'a lower-case SQL identifier: letters, digits, underscore, not starting with a digit')
    .refine((name) => !SYSTEM_SCHEMA.test(name), SYSTEM_SCHEMA_PROBLEM)
    .default('adops'),
  ADOPS_JOBS_DIR: z.string().min(1).default('./jobs'),
  LOG_LEVEL: z.enum(LOG_LEVELS, `one of: ${LOG_LEVELS.join(', ')}`).default('info'),
  ADOPS_HTTP_CONNECT_TIMEOUT_MS: int(1, 600_000).default(10_000),
  ADOPS_HTTP_HEADERS_TIMEOUT_MS: int(...rangeOf(SERVER_FIELDS.headers_timeout_ms)).default(60_000),
  ADOPS_HTTP_BODY_TIMEOUT_MS: int(...rangeOf(SERVER_FIELDS.body_timeout_ms)).default(120_000),
  // 30 minutes: a 500 MB body (ADOPS_MAX_BODY_MB's default) completes at 0.28 MB/s.
  ADOPS_HTTP_REQUEST_TIMEOUT_MS: int(1_000, 86_400_000).default(1_800_000),
  ADOPS_HTTP_ATTEMPTS: int(1, 100).default(5),
  ADOPS_HTTP_MAX_BACKOFF_MS: int(1, 600_000).default(30_000),
  // At most a day: far beyond any real pause, and well inside what a Node timer holds (24.8 days).
  ADOPS_MAX_RETRY_AFTER_SECONDS: int(1, 86_400).default(900),
  ADOPS_HTTP_CONNECTIONS: int(...rangeOf(SERVER_FIELDS.connections)).default(16),
  ADOPS_HTTP_COMPRESSION: z.enum(COMPRESSIONS, `one of: ${COMPRESSIONS.join(', ')}`).default('gzip'),
  ADOPS_MAX_BODY_MB: int(1, 4000).default(500),
  ADOPS_STREAM_BODY_MB: int(1, 4000).default(8),
  ADOPS_QUEUE_PREFIX: z
    .string()
    .regex(QUEUE_PREFIX, 'letters, digits and _ . : - (up to 100)')
    .default('adops'),
  ADOPS_QUEUE: z.enum(['redis', 'postgres'], 'one of: redis, postgres').default('redis'),
  ADOPS_PULL_ATTEMPTS: int(1, 100).default(8),
  ADOPS_SYNC_ATTEMPTS: int(1, 100).default(12),
  ADOPS_RATE_LIMIT: int(...rangeOf(SERVER_FIELDS.rate_limit)).default(10),
  ADOPS_SHUTDOWN_TIMEOUT_SECONDS: int(1, 86_400).default(60),
  ADOPS_REDIS_OUTAGE_SECONDS: int(1, 86_400).default(120),
  ADOPS_HEAL_DAYS: int(1, 3660).default(30),
  ADOPS_RAW_RETENTION_DAYS: int(0, 3660).default(30),
  ADOPS_METRICS_PORT: int(0, 65_535).default(9464),
  ADOPS_METRICS_HOST: z
    .string()
    .refine(
      (h) => isIP(h) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(h),
      'an IP address or host name to listen on, e.g. 127.0.0.1 or 0.0.0.0',
    )
    .default('127.0.0.1'),
  ADOPS_COPY_FORMAT: z.enum(['binary', 'text'], 'one of: binary, text').default('binary'),
  ADOPS_WEBHOOK_URL: z
    .string()
    .url('an http(s) URL, e.g. https://hooks.example.com/adops')
    .refine((u) => /^https?:\/\//i.test(u), 'an http(s) URL, e.g. https://hooks.example.com/adops')
    .optional(),
} as const;

/** Every env var the configuration reads, for docs and tests. */
export const ENV_VARS = [
  ...Object.keys(ENV_SCHEMA),
  ...REDIS_HA_VARS,
  'ADOPS_API_KEY',
  'ADOPS_API_KEY_FILE',
  'ADOPS_WEBHOOK_SECRET',
  'ADOPS_ACCOUNTS_FILE',
] as const;

/**
 * The schema of the Postgres queues next to `schema`: `<schema>_queue` for the prefix `standard`
 * (ADOPS_QUEUE_PREFIX's default), a hash of any other prefix appended, so prefixes stay apart.
 */
export function queueSchemaOf(schema: string, prefix: string, standard = 'adops'): string {
  if (prefix === standard) return `${schema}_queue`;
  return `${schema}_queue_${createHash('sha256').update(prefix).digest('hex').slice(0, 12)}`;
}

/**
 * Validates the environment once into a frozen Config. Throws ConfigError naming the variable and
 * what is allowed. Empty strings count as unset, as a shell `FOO= cmd` intends.
 */
export function loadConfig(env: Env): Config {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(ENV_SCHEMA)) {
    const result = (schema as z.ZodType).safeParse(clean[name]);
    if (!result.success) {
      const issue = result.error.issues[0];
      // A connection URL may carry a password: the message shows the value without it.
      const shown = clean[name] === undefined ? 'missing' : JSON.stringify(withoutPassword(clean[name]));
      throw new ConfigError(
        `${name}=${shown} is invalid: expected ${issue?.message ?? 'a valid value'}`,
        name,
      );
    }
    values[name] = result.data;
  }
  const v = values as { [K in keyof typeof ENV_SCHEMA]: z.output<(typeof ENV_SCHEMA)[K]> };
  const redis = readRedisTarget(clean, v.REDIS_URL, clean.REDIS_URL !== undefined);
  const apiKey = readApiKey(clean);
  const accountsFile = clean.ADOPS_ACCOUNTS_FILE;
  const server: ServerSettings = {
    auth: v.ADOPS_AUTH,
    reportParams: v.ADOPS_REPORT_PARAMS,
    compression: v.ADOPS_HTTP_COMPRESSION,
    rateLimitPerSecond: v.ADOPS_RATE_LIMIT,
    connections: v.ADOPS_HTTP_CONNECTIONS,
    headersTimeoutMs: v.ADOPS_HTTP_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: v.ADOPS_HTTP_BODY_TIMEOUT_MS,
  };
  return Object.freeze({
    baseUrl: v.ADOPS_BASE_URL,
    apiKey,
    auth: v.ADOPS_AUTH,
    reportParams: v.ADOPS_REPORT_PARAMS,
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    redis,
    schema: v.ADOPS_SCHEMA,
    jobsDir: v.ADOPS_JOBS_DIR,
    logLevel: v.LOG_LEVEL,
    http: Object.freeze({
      connectTimeoutMs: v.ADOPS_HTTP_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: v.ADOPS_HTTP_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: v.ADOPS_HTTP_BODY_TIMEOUT_MS,
      requestTimeoutMs: v.ADOPS_HTTP_REQUEST_TIMEOUT_MS,
      attempts: v.ADOPS_HTTP_ATTEMPTS,
      maxBackoffMs: v.ADOPS_HTTP_MAX_BACKOFF_MS,
      retryAfterCapMs: v.ADOPS_MAX_RETRY_AFTER_SECONDS * 1000,
      connections: v.ADOPS_HTTP_CONNECTIONS,
      compression: v.ADOPS_HTTP_COMPRESSION,
      maxBodyMb: v.ADOPS_MAX_BODY_MB,
      streamBodyMb: v.ADOPS_STREAM_BODY_MB,
    }),
    queue: Object.freeze({
      prefix: queuePrefixOn(redis, v.ADOPS_QUEUE_PREFIX),
      backend: v.ADOPS_QUEUE,
      schema: queueSchemaOf(v.ADOPS_SCHEMA, v.ADOPS_QUEUE_PREFIX),
      pullAttempts: v.ADOPS_PULL_ATTEMPTS,
      syncAttempts: v.ADOPS_SYNC_ATTEMPTS,
      rateLimitPerSecond: v.ADOPS_RATE_LIMIT,
      shutdownTimeoutSeconds: v.ADOPS_SHUTDOWN_TIMEOUT_SECONDS,
      redisOutageSeconds: v.ADOPS_REDIS_OUTAGE_SECONDS,
    }),
    healDays: v.ADOPS_HEAL_DAYS,
    rawRetentionDays: v.ADOPS_RAW_RETENTION_DAYS,
    metricsPort: v.ADOPS_METRICS_PORT,
    metricsHost: v.ADOPS_METRICS_HOST,
    copyFormat: v.ADOPS_COPY_FORMAT,
    webhook: readWebhook(v.ADOPS_WEBHOOK_URL, clean.ADOPS_WEBHOOK_SECRET),
    accounts: Object.freeze(
      accountsFile === undefined
        ? [envAccount({ baseUrl: v.ADOPS_BASE_URL, apiKey, ...server })]
        : readAccountsFile(accountsFile, clean, server),
    ),
    accountsFile,
  });
}

/**
 * The configuration as one account's API client and limiter see it: its base URL, key and server
 * settings (auth, report parameters, compression, rate limit, connections, timeouts) in place of
 * the env settings. Everything else (attempts, body sizes, queue, warehouse) is shared.
 */
export function accountConfig(config: Config, account: Account): Config {
  return Object.freeze({
    ...config,
    baseUrl: account.baseUrl,
    apiKey: account.apiKey,
    auth: account.auth,
    reportParams: account.reportParams,
    http: Object.freeze({
      ...config.http,
      compression: account.compression,
      connections: account.connections,
      headersTimeoutMs: account.headersTimeoutMs,
      bodyTimeoutMs: account.bodyTimeoutMs,
    }),
    queue: Object.freeze({ ...config.queue, rateLimitPerSecond: account.rateLimitPerSecond }),
  });
}

/** The environment's server settings: what an account of the accounts file defaults to. */
export function serverDefaults(config: Config): ServerSettings {
  return {
    auth: config.auth,
    reportParams: config.reportParams,
    compression: config.http.compression,
    rateLimitPerSecond: config.queue.rateLimitPerSecond,
    connections: config.http.connections,
    headersTimeoutMs: config.http.headersTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
  };
}

/** What every Standard Webhooks secret (ADOPS_WEBHOOK_SECRET) starts with. */
const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** The Standard Webhooks bounds of an HMAC key, in bytes (192 to 512 bits). */
const WEBHOOK_KEY_BYTES = { min: 24, max: 64 } as const;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of a `whsec_<base64>` secret, or why it is not one (never quoting the secret):
 * `form` when it lacks the prefix or is not base64, `size` when its key is outside WEBHOOK_KEY_BYTES.
 */
export function webhookSecretKey(
  secret: string,
):
  | { readonly key: Buffer }
  | { readonly problem: 'form' }
  | { readonly problem: 'size'; readonly bytes: number } {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return { problem: 'form' };
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) return { problem: 'form' };
  const key = Buffer.from(encoded, 'base64');
  if (key.length < WEBHOOK_KEY_BYTES.min || key.length > WEBHOOK_KEY_BYTES.max)
    return { problem: 'size', bytes: key.length };
  return { key };
}

/** How to make a good ADOPS_WEBHOOK_SECRET, for every message about a bad one. */
const MAKE_SECRET = 'generate one with: echo "whsec_$(openssl rand -base64 32)"';

/**
 * The webhook settings: none without ADOPS_WEBHOOK_URL; with it, a Standard Webhooks secret
 * (`whsec_` and the base64 of a 24 to 64 byte key) is required. Messages never echo the secret.
 */
function readWebhook(url: string | undefined, secret: string | undefined): WebhookConfig | undefined {
  if (url === undefined) return undefined;
  const name = 'ADOPS_WEBHOOK_SECRET';
  const form = `whsec_ followed by the base64 of ${WEBHOOK_KEY_BYTES.min} to ${WEBHOOK_KEY_BYTES.max} random bytes`;
  if (secret === undefined)
    throw new ConfigError(
      `${name} is missing: ADOPS_WEBHOOK_URL is set, so events must be signed; set ${name} to ${form}; ${MAKE_SECRET}`,
      name,
    );
  const read = webhookSecretKey(secret);
  if ('problem' in read)
    throw new ConfigError(
      read.problem === 'form'
        ? `${name} is not a Standard Webhooks secret: expected ${form}; ${MAKE_SECRET}`
        : `${name} holds a ${read.bytes}-byte key: expected ${form}; ${MAKE_SECRET}`,
      name,
    );
  return Object.freeze({ url, secret });
}

/**
 * The strings that must never be logged or stored, whichever variable supplied them (the API key
 * from ADOPS_API_KEY or ADOPS_API_KEY_FILE, the webhook secret): what every redaction is given.
 */
export function secretsOf(
  config: Pick<Config, 'apiKey' | 'webhook'> & { readonly accounts?: readonly Account[] },
): string[] {
  // The webhook key also without its whsec_ prefix: a receiver may quote it in that form.
  const webhook = config.webhook?.secret;
  const all = [
    config.apiKey,
    ...(config.accounts ?? []).map((a) => a.apiKey),
    webhook,
    webhook?.slice(WEBHOOK_SECRET_PREFIX.length),
  ];
  return [...new Set(all.filter((s): s is string => s !== undefined))];
}

function readApiKey(env: Env): string | undefined {
  const direct = env.ADOPS_API_KEY;
  const file = env.ADOPS_API_KEY_FILE;
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError('ADOPS_API_KEY and ADOPS_API_KEY_FILE are both set: set only one', 'ADOPS_API_KEY');
  }
  if (file === undefined) return validKey(direct, 'ADOPS_API_KEY');
  let text: string;
  try {
    text = readBoundedFile(file, MAX_KEY_FILE_BYTES, 'a file holding the key');
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    throw new ConfigError(
      error.code === undefined
        ? `ADOPS_API_KEY_FILE=${file}: ${error.message}`
        : `ADOPS_API_KEY_FILE=${file} cannot be read (${error.code}): expected a readable file holding the key`,
      'ADOPS_API_KEY_FILE',
      { cause: error },
    );
  }
  return validKey(text.replace(/\r?\n$/, ''), 'ADOPS_API_KEY_FILE');
}

function validKey(key: string | undefined, name: string): string | undefined {
  if (key === undefined) return undefined;
  // Never echo the key itself: the message names the variable and the rule only.
  if (key.length === 0) throw new ConfigError(`${name} holds an empty key: expected the API key`, name);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what we reject
  if (/[\s\u0000-\u001f\u007f]/.test(key)) {
    throw new ConfigError(`${name} holds whitespace or control characters: expected the API key alone`, name);
  }
  return key;
}

/** The API key, or a ConfigError saying how to provide it. For commands that call the API. */
export function requireApiKey(config: Config): string {
  if (config.apiKey === undefined) {
    throw new ConfigError(
      'ADOPS_API_KEY is missing: set ADOPS_API_KEY or ADOPS_API_KEY_FILE',
      'ADOPS_API_KEY',
    );
  }
  return config.apiKey;
}

/** The API base URL, or a ConfigError saying how to provide it. */
export function requireBaseUrl(config: Config): string {
  if (config.baseUrl === undefined) {
    throw new ConfigError(
      'ADOPS_BASE_URL is missing: expected the API base URL ending in /v2',
      'ADOPS_BASE_URL',
    );
  }
  return config.baseUrl;
}
