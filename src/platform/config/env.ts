// The environment validated once into the frozen Config; messages name the variable, never a secret.
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
  SENTINEL_URL_FORM,
  type RedisTarget,
} from './connections.js';
import { ConfigError, errnoCode } from './files.js';
import { KEY_LIKE_HIDDEN, mayHoldKey } from '../log/secret-pattern.js';
import {
  DEFAULT_ACCOUNT,
  DEFAULT_DAYS_PER_REQUEST,
  keyProblem,
  readKeyFile,
  readAccountsFile,
  type Account,
  AUTH_FORMS,
  COMPRESSIONS,
  REPORT_PARAMS,
  SERVER_FIELDS,
  type ServerSettings,
} from './accounts.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Bytes a key file may hold: a key is tens of bytes; anything near this is the wrong file. */
const MAX_KEY_FILE_BYTES = 64 * 1024;
/** A schema name ADOPS_SCHEMA (or a flag naming a schema) may take: a lower-case SQL identifier. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** Postgres' own schemas: `pg_*` (pg_catalog, pg_toast, each session's pg_temp) and information_schema. */
export const SYSTEM_SCHEMA = /^(pg_.*|information_schema)$/;
/** Why a schema name cannot be ours, for messages of ADOPS_SCHEMA and of flags naming a schema. */
export const SYSTEM_SCHEMA_PROBLEM =
  "a schema of our own: pg_* and information_schema are Postgres' own schemas";
/** A BullMQ key prefix ADOPS_QUEUE_PREFIX (or a flag naming a prefix) may take. */
export const QUEUE_PREFIX = /^[A-Za-z0-9_.:-]{1,100}$/;

/** The webhook endpoint and the secret its events are signed with (never logged, never in Redis). */
export interface WebhookConfig {
  readonly url: string;
  readonly secret: string; // A Standard Webhooks secret, `whsec_<base64 of 24 to 64 bytes>`.
}

type Env = Readonly<Record<string, string | undefined>>;

const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `at least ${min}`).max(max, `at most ${max}`));

/** A pace band: a decimal ratio of delivered to expected, e.g. 0.9. */
const ratio = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'a decimal ratio such as 0.9')
  .transform(Number)
  .pipe(z.number().positive('above 0').max(100, 'at most 100'));

/** A connection URL checked in full: the issue reads `<form>: <what is wrong>`. */
const checkedUrl = (form: (value: string) => string, problem: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const found = problem(value);
    if (found !== undefined) ctx.addIssue({ code: 'custom', message: `${form(value)}: ${found}` });
  });

/** The bounds of a numeric server setting: the variable and the accounts-file field share them. */
const rangeOf = (f: { readonly range: readonly [number, number, string] }) =>
  [f.range[0], f.range[1]] as const;

/** Each variable's schema; the key, webhook secret, accounts file and Redis HA variables are read apart. */
export const ENV_SCHEMA = {
  ADOPS_BASE_URL: checkedUrl(() => BASE_URL_FORM, baseUrlProblem)
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  ADOPS_AUTH: z.enum(AUTH_FORMS, `one of: ${AUTH_FORMS.join(', ')}`).default('bearer'),
  ADOPS_REPORT_PARAMS: z.enum(REPORT_PARAMS, `one of: ${REPORT_PARAMS.join(', ')}`).default('repeat'),
  DATABASE_URL: checkedUrl(() => DATABASE_URL_FORM, postgresUrlProblem).optional(),
  REDIS_URL: checkedUrl(
    (url) => (isSentinelUrl(url) ? SENTINEL_URL_FORM : REDIS_URL_FORM),
    redisUrlProblem,
  ).default('redis://127.0.0.1:6379'),
  ADOPS_SCHEMA: z
    .string()
    .regex(SCHEMA_NAME, 'a lower-case SQL identifier: letters, digits, underscore, not starting with a digit')
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
  ADOPS_DAYS_PER_REQUEST: int(...rangeOf(SERVER_FIELDS.days_per_request)).default(DEFAULT_DAYS_PER_REQUEST),
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
  ADOPS_PACING_REPORT: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,40}$/, 'a report name of jobs/')
    .optional(),
  ADOPS_PACING_BEHIND: ratio.default(0.9),
  ADOPS_PACING_AHEAD: ratio.default(1.1),
} as const;

/** Variables whose value is shown with its password masked (withoutPassword): their other parts are no key. */
const PASSWORD_MASKED = new Set(['DATABASE_URL', 'REDIS_URL']);

/** The validated, frozen configuration every part receives. Secrets live only in `apiKey` and `webhook.secret`. */
export type Config = ReturnType<typeof loadConfig>;

export const PG_NAME_BYTES = 63; // The longest name Postgres keeps: a longer one is silently cut to it.

/** The schema of the Postgres queues next to `schema`: `<schema>_queue` for the prefix `standard`
 * (ADOPS_QUEUE_PREFIX's default), a hash of any other prefix appended, so prefixes stay apart. */
export function queueSchemaOf(schema: string, prefix: string, standard = 'adops'): string {
  if (prefix === standard) return `${schema}_queue`;
  return `${schema}_queue_${createHash('sha256').update(prefix).digest('hex').slice(0, 12)}`;
}

/** The environment validated once into a frozen Config, or a ConfigError naming the variable. */
export function loadConfig(env: Env) {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(ENV_SCHEMA)) {
    // Empty strings count as unset (dropped from `clean`), as a shell `FOO= cmd` intends.
    const result = (schema as z.ZodType).safeParse(clean[name]);
    if (!result.success) {
      const issue = result.error.issues[0];
      // A URL's password is masked; a value that may hold a key (wrong variable) is not shown at all.
      const value = clean[name] === undefined ? undefined : withoutPassword(clean[name]);
      const shown =
        value === undefined
          ? '=missing'
          : mayHoldKey(value) && !PASSWORD_MASKED.has(name)
            ? ` (${KEY_LIKE_HIDDEN})`
            : `=${JSON.stringify(value)}`;
      throw new ConfigError(
        `${name}${shown} is invalid: expected ${issue?.message ?? 'a valid value'}`,
        name,
      );
    }
    values[name] = result.data;
  }
  const v = values as { [K in keyof typeof ENV_SCHEMA]: z.output<(typeof ENV_SCHEMA)[K]> };
  const redis: RedisTarget = readRedisTarget(clean, v.REDIS_URL, clean.REDIS_URL !== undefined);
  const accountsFile = clean.ADOPS_ACCOUNTS_FILE;
  const queueSchema = queueSchemaOf(v.ADOPS_SCHEMA, v.ADOPS_QUEUE_PREFIX);
  // Postgres silently cuts a longer name to 63 bytes, so two deployments could share one queue schema.
  if (v.ADOPS_QUEUE === 'postgres' && Buffer.byteLength(queueSchema) > PG_NAME_BYTES)
    throw new ConfigError(
      `ADOPS_SCHEMA=${JSON.stringify(v.ADOPS_SCHEMA)} is too long for ADOPS_QUEUE=postgres: its queue schema ` +
        `"${queueSchema}" would be ${Buffer.byteLength(queueSchema)} bytes, over Postgres' ${PG_NAME_BYTES}-byte limit for a name; ` +
        `use an ADOPS_SCHEMA of at most ${PG_NAME_BYTES - (queueSchema.length - v.ADOPS_SCHEMA.length)} characters`,
      'ADOPS_SCHEMA',
    );
  const config = {
    /** API base URL ending in /v2; undefined means "only `adops demo` may run" (it embeds the emulator). */
    baseUrl: v.ADOPS_BASE_URL,
    /** The API key; never log it, never put it in Redis or Postgres. */
    apiKey: readApiKey(clean),
    auth: v.ADOPS_AUTH,
    /** How GET /reports sends its parameters (the spec leaves it open): see reportRequest in src/api/client.ts. */
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
      /** Deadline of one request to its body's last byte: a dripping body never trips bodyTimeoutMs. */
      requestTimeoutMs: v.ADOPS_HTTP_REQUEST_TIMEOUT_MS,
      attempts: v.ADOPS_HTTP_ATTEMPTS,
      maxBackoffMs: v.ADOPS_HTTP_MAX_BACKOFF_MS,
      /** Longest pause a server's Retry-After can impose: a longer one is cut to it, with a warning. */
      retryAfterCapMs: v.ADOPS_MAX_RETRY_AFTER_SECONDS * 1000,
      connections: v.ADOPS_HTTP_CONNECTIONS,
      compression: v.ADOPS_HTTP_COMPRESSION,
      /** Largest report body read, in MB (1,000,000 bytes) decompressed: a larger one fails its pull for good. */
      maxBodyMb: v.ADOPS_MAX_BODY_MB,
      /** Report bodies from this size on are loaded as they stream in, never held whole. */
      streamBodyMb: v.ADOPS_STREAM_BODY_MB,
    }),
    queue: Object.freeze({
      /** BullMQ key prefix; on a Cluster in braces, a hash tag, so all our keys share one slot. */
      prefix: queuePrefixOn(redis, v.ADOPS_QUEUE_PREFIX),
      /** Where the queues live (ADOPS_QUEUE): BullMQ on Redis, or BullMQ's PostgreSQL backend. */
      backend: v.ADOPS_QUEUE,
      schema: queueSchema,
      pullAttempts: v.ADOPS_PULL_ATTEMPTS,
      /** Attempts per API request of a catalogue sync against transient faults (429s not counted). */
      syncAttempts: v.ADOPS_SYNC_ATTEMPTS,
      rateLimitPerSecond: v.ADOPS_RATE_LIMIT,
      shutdownTimeoutSeconds: v.ADOPS_SHUTDOWN_TIMEOUT_SECONDS,
      /** Seconds a waiting command rides out an unreachable Redis before it gives up (finish with `adops heal`). */
      redisOutageSeconds: v.ADOPS_REDIS_OUTAGE_SECONDS,
    }),
    healDays: v.ADOPS_HEAL_DAYS,
    rawRetentionDays: v.ADOPS_RAW_RETENTION_DAYS,
    metricsPort: v.ADOPS_METRICS_PORT,
    /** Address the metrics server listens on: loopback unless a deployment opens it on purpose. */
    metricsHost: v.ADOPS_METRICS_HOST,
    copyFormat: v.ADOPS_COPY_FORMAT,
    daysPerRequest: v.ADOPS_DAYS_PER_REQUEST,
    webhook: readWebhook(v.ADOPS_WEBHOOK_URL, clean.ADOPS_WEBHOOK_SECRET),
    pacing: readPacing(v.ADOPS_PACING_REPORT, v.ADOPS_PACING_BEHIND, v.ADOPS_PACING_AHEAD),
    accountsFile,
  };
  const server = serverDefaults(config);
  /** Those of ADOPS_ACCOUNTS_FILE, or the env settings above as the one account `default`. Never empty. */
  const accounts: readonly Account[] = Object.freeze(
    accountsFile === undefined
      ? [
          Object.freeze({
            ...server,
            name: DEFAULT_ACCOUNT,
            baseUrl: config.baseUrl,
            apiKey: config.apiKey,
            timezone: 'UTC',
            reports: undefined,
          }),
        ]
      : readAccountsFile(accountsFile, clean, server),
  );
  return Object.freeze({ ...config, accounts });
}

/** The configuration as one account's client and limiter see it: its URL, key, settings and name in place. */
export function accountConfig(config: Config, account: Account): AccountConfig {
  const { auth, reportParams, compression, connections, headersTimeoutMs, bodyTimeoutMs } = account;
  return Object.freeze({
    ...config,
    baseUrl: account.baseUrl,
    apiKey: account.apiKey,
    auth,
    reportParams,
    http: Object.freeze({ ...config.http, compression, connections, headersTimeoutMs, bodyTimeoutMs }),
    queue: Object.freeze({ ...config.queue, rateLimitPerSecond: account.rateLimitPerSecond }),
    account: account.name,
  });
}

/** A configuration, perhaps one account's (accountConfig): `account` names it then. */
export type AccountConfig = Config & { readonly account?: string };

/** The environment's server settings: what an account of the accounts file defaults to. */
export function serverDefaults(
  config: Pick<Config, 'auth' | 'reportParams' | 'http' | 'queue' | 'daysPerRequest'>,
): ServerSettings {
  return {
    auth: config.auth,
    reportParams: config.reportParams,
    compression: config.http.compression,
    rateLimitPerSecond: config.queue.rateLimitPerSecond,
    connections: config.http.connections,
    headersTimeoutMs: config.http.headersTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    daysPerRequest: config.daysPerRequest,
  };
}

/** bi_campaign_pacing's settings: the report it reads (undefined: migrate picks one) and its pace bands. */
export interface PacingSettings {
  readonly report?: string;
  readonly behind: number; // A pace below it is behind.
  readonly ahead: number; // A pace above it is ahead.
}

function readPacing(report: string | undefined, behind: number, ahead: number): PacingSettings {
  if (behind > ahead)
    throw new ConfigError(
      `ADOPS_PACING_BEHIND=${behind} is above ADOPS_PACING_AHEAD=${ahead}: behind must be at most ahead`,
      'ADOPS_PACING_BEHIND',
    );
  return Object.freeze({ ...(report === undefined ? {} : { report }), behind, ahead });
}

const WEBHOOK_SECRET_PREFIX = 'whsec_';
const WEBHOOK_KEY_BYTES = { min: 24, max: 64 } as const;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The HMAC key of a `whsec_<base64>` secret, or why it is not one (never quoting the secret). */
export function webhookSecretKey(
  secret: string,
):
  | { readonly key: Buffer }
  | { readonly problem: 'form' }
  | { readonly problem: 'size'; readonly bytes: number } {
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX) || encoded === '' || !BASE64.test(encoded))
    return { problem: 'form' };
  const key = Buffer.from(encoded, 'base64');
  if (key.length < WEBHOOK_KEY_BYTES.min || key.length > WEBHOOK_KEY_BYTES.max)
    return { problem: 'size', bytes: key.length };
  return { key };
}

const MAKE_SECRET = 'generate one with: echo "whsec_$(openssl rand -base64 32)"';

/** The webhook settings: none without ADOPS_WEBHOOK_URL; with it, a Standard Webhooks secret is required. */
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

/** The strings that must never be logged or stored (API keys, the webhook secret): what every redaction is given. */
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
  const file = env.ADOPS_API_KEY_FILE;
  if (env.ADOPS_API_KEY !== undefined && file !== undefined)
    throw new ConfigError('ADOPS_API_KEY and ADOPS_API_KEY_FILE are both set: set only one', 'ADOPS_API_KEY');
  const name = file === undefined ? 'ADOPS_API_KEY' : 'ADOPS_API_KEY_FILE';
  let key = env.ADOPS_API_KEY;
  if (file !== undefined)
    try {
      key = readKeyFile(file, MAX_KEY_FILE_BYTES);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      // The key itself is sometimes pasted here: a value that may be one is not quoted.
      const set = mayHoldKey(file) ? `${name} (${KEY_LIKE_HIDDEN})` : `${name}=${file}`;
      throw new ConfigError(
        error.cause === undefined
          ? `${set}: ${error.message}`
          : `${set} cannot be read (${errnoCode(error.cause) ?? 'error'}): expected a readable file holding the key`,
        name,
        { cause: error },
      );
    }
  // Never echo the key itself: the message names the variable and the rule only.
  const problem = key === undefined ? undefined : keyProblem(key);
  if (problem !== undefined)
    throw new ConfigError(
      problem === 'empty'
        ? `${name} holds an empty key: expected the API key`
        : `${name} holds whitespace or control characters: expected the API key alone`,
      name,
    );
  return key;
}

/** The API key, or a ConfigError saying how to provide it. For commands that call the API. */
export function requireApiKey(config: Config): string {
  if (config.apiKey !== undefined) return config.apiKey;
  throw new ConfigError('ADOPS_API_KEY is missing: set ADOPS_API_KEY or ADOPS_API_KEY_FILE', 'ADOPS_API_KEY');
}

/** The API base URL, or a ConfigError saying how to provide it. */
export function requireBaseUrl(config: Config): string {
  if (config.baseUrl !== undefined) return config.baseUrl;
  throw new ConfigError(
    'ADOPS_BASE_URL is missing: expected the API base URL ending in /v2',
    'ADOPS_BASE_URL',
  );
}
