// The accounts a deployment pulls: ADOPS_ACCOUNTS_FILE's, or the env's as `default`; names checked as report
// names (they go into rows, job ids, keys); server settings per account, defaulting to the env's.
import { dirname, resolve } from 'node:path';
import { isTimeZone, planDateProblem } from '../dates/calendar.js';
import { isWhole, parseConfigYaml } from './yaml.js';
import { readBoundedFile, ConfigError } from './files.js';
import { BASE_URL_FORM, baseUrlProblem } from './connections.js';
import { KEY_LIKE_HIDDEN, mayHoldKey } from '../log/secret-pattern.js';

/** The GET /reports parameter forms (ADOPS_REPORT_PARAMS, an account's `report_params`). */
export const REPORT_PARAMS = ['repeat', 'brackets', 'comma', 'json-body'] as const;
/** What a client asks the server for (ADOPS_HTTP_COMPRESSION, an account's `compression`). */
export const COMPRESSIONS = ['gzip', 'none'] as const;
/** The auth header forms (ADOPS_AUTH, an account's `auth`). */
export const AUTH_FORMS = ['bearer', 'x-api-key'] as const;

/** The settings whose right value depends on an account's server: per account, defaulting to the env. */
export interface ServerSettings {
  readonly auth: (typeof AUTH_FORMS)[number];
  /** How GET /reports sends its parameters (reportRequest in src/api/client.ts). */
  readonly reportParams: (typeof REPORT_PARAMS)[number];
  /** 'gzip': ask for gzip and decompress while streaming; 'none': ask for the identity encoding. */
  readonly compression: (typeof COMPRESSIONS)[number];
  readonly rateLimitPerSecond: number; // API requests per second to this account, across all workers.
  readonly connections: number; // Keep-alive connections to the server, per worker process.
  /** Time the server may take to the response headers (a big report takes a slow server a while). */
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number; // Longest silence the server may leave between body chunks.
  /** Days one report request may cover (reports with the `day` dimension); a job's own days_per_request wins. */
  readonly daysPerRequest: number;
}

/** One accounts-file field of ServerSettings: a choice `oneOf`, or whole numbers in `range` (from, to, unit). */
interface ServerField {
  readonly setting: keyof ServerSettings;
  readonly oneOf?: readonly string[];
  readonly range?: readonly [number, number, string];
}

/** Every accounts-file field of ServerSettings (each defaults to its ADOPS_* variable), in the docs' order. */
export const SERVER_FIELDS = {
  auth: { setting: 'auth', oneOf: AUTH_FORMS },
  report_params: { setting: 'reportParams', oneOf: REPORT_PARAMS },
  compression: { setting: 'compression', oneOf: COMPRESSIONS },
  rate_limit: { setting: 'rateLimitPerSecond', range: [1, 100_000, 'requests per second'] },
  connections: { setting: 'connections', range: [1, 1024, 'connections'] },
  headers_timeout_ms: { setting: 'headersTimeoutMs', range: [1, 3_600_000, 'milliseconds'] },
  body_timeout_ms: { setting: 'bodyTimeoutMs', range: [1, 3_600_000, 'milliseconds'] },
  days_per_request: { setting: 'daysPerRequest', range: [1, 366, 'days'] },
} as const satisfies Readonly<Record<string, ServerField>>;

/** Days one report request covers unless ADOPS_DAYS_PER_REQUEST, an account or a job says otherwise. */
export const DEFAULT_DAYS_PER_REQUEST = 7;

/** The account of a deployment without ADOPS_ACCOUNTS_FILE, and of rows written before accounts. */
export const DEFAULT_ACCOUNT = 'default';

/** An account's name: like a report's (lower case letter, then up to 40 lower case letters, digits or _). */
export const ACCOUNT_NAME = /^[a-z][a-z0-9_]{0,40}$/;

/** One ad server account: where its API is, its key, and how its server is spoken to. */
export interface Account extends ServerSettings {
  readonly name: string;
  /** API base URL ending in /v2; undefined only for the env account before a command needs it. */
  readonly baseUrl: string | undefined;
  readonly apiKey: string | undefined; // The account's API key; never logged, never in Redis or Postgres.
  readonly apiKeyEnv?: string; // The variable its api_key_env names, if that is where its key comes from.
  /** The account's IANA time zone (UTC by default); planning follows each report's schedule time zone. */
  readonly timezone: string;
  /** Reports this account runs; undefined: every report definition. */
  readonly reports: readonly string[] | undefined;
  /** Nothing before it is pulled, healed or called missing; a report's own start_date, when later, wins. */
  readonly startDate?: string;
}

/** The name if valid; otherwise ConfigError naming `subject` (the flag, or `file: field`). */
function checkAccountName(name: unknown, subject: string): string {
  if (typeof name !== 'string' || !ACCOUNT_NAME.test(name))
    throw new ConfigError(
      `${subject}: ${typeof name === 'string' && mayHoldKey(name) ? `(${KEY_LIKE_HIDDEN})` : (JSON.stringify(name) ?? String(name))} is not an account name; expected ${ACCOUNT_NAME.source} ` +
        '(lower case letter, then up to 40 lower case letters, digits or _)',
      subject,
    );
  return name;
}

const MAX_FILE_BYTES = 256 * 1024;
const ACCOUNT_KEYS = new Set([
  'name',
  'base_url',
  'api_key_file',
  'api_key_env',
  ...Object.keys(SERVER_FIELDS),
  'timezone',
  'reports',
  'start_date',
]);

/** ADOPS_ACCOUNTS_FILE's accounts, checked; `env` resolves `api_key_env`, `defaults` fills in settings. */
export function readAccountsFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  defaults: ServerSettings,
): Account[] {
  const where = mayHoldKey(path) ? `ADOPS_ACCOUNTS_FILE (${KEY_LIKE_HIDDEN})` : `ADOPS_ACCOUNTS_FILE=${path}`;
  let text: string;
  try {
    text = readBoundedFile(path, MAX_FILE_BYTES, 'an accounts file');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${where}: ${error.message}`, 'ADOPS_ACCOUNTS_FILE', { cause: error });
  }
  const doc = parseConfigYaml(text, where, 'ADOPS_ACCOUNTS_FILE');
  const list =
    typeof doc === 'object' && doc !== null && !Array.isArray(doc) && 'accounts' in doc
      ? (doc as { accounts: unknown }).accounts
      : doc;
  if (!Array.isArray(list) || list.length === 0)
    throw new ConfigError(
      `${where}: expected a list of accounts (or accounts: [...]), each with name, base_url and api_key_file or api_key_env`,
      'ADOPS_ACCOUNTS_FILE',
    );
  const accounts = list.map((item, i) => readAccount(path, item, i, env, defaults));
  const twice = accounts.find((a, i) => accounts.findIndex((b) => b.name === a.name) !== i);
  if (twice !== undefined)
    throw new ConfigError(
      `${path}: account "${twice.name}" is listed twice; names must be unique`,
      `${path}: name`,
    );
  return accounts;
}

function readAccount(
  path: string,
  item: unknown,
  index: number,
  env: Readonly<Record<string, string | undefined>>,
  defaults: ServerSettings,
): Account {
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    throw new ConfigError(`${path}: account #${index + 1} is not a mapping`, `${path}: accounts`);
  const o = item as Record<string, unknown>;
  const name = checkAccountName(o.name, `${path}: account #${index + 1}: name`);
  const fail = (field: string, message: string): never => {
    throw new ConfigError(`${path}: account "${name}": ${field}: ${message}`, `${path}: ${name}.${field}`);
  };
  for (const key of Object.keys(o))
    if (!ACCOUNT_KEYS.has(key))
      fail(
        // A key written as a field name (`sk_live_...:`) is no name to quote.
        mayHoldKey(key) ? `a field (its name is not shown: it may hold an API key)` : key,
        /^(api_?)?key$|^api_key$|token|secret/i.test(key)
          ? 'an API key is never written into the accounts file; use api_key_file or api_key_env'
          : `unknown field; allowed: ${[...ACCOUNT_KEYS].join(', ')}`,
      );

  const baseUrl =
    typeof o.base_url === 'string' ? o.base_url : fail('base_url', `missing; expected ${BASE_URL_FORM}`);
  const urlProblem = baseUrlProblem(baseUrl);
  if (urlProblem !== undefined) fail('base_url', `${BASE_URL_FORM}: ${urlProblem}`);

  const { api_key_file: keyFile, api_key_env: keyEnv } = o;
  if (keyFile !== undefined && keyEnv !== undefined)
    fail('api_key_file', 'api_key_env is set too: set only one');
  let apiKey: string | undefined;
  if (keyFile !== undefined) {
    if (typeof keyFile !== 'string' || keyFile === '')
      return fail('api_key_file', 'expected the path of a file holding the key');
    try {
      apiKey = readKeyFile(resolve(dirname(path), keyFile), MAX_FILE_BYTES);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      fail('api_key_file', `${mayHoldKey(keyFile) ? `(${KEY_LIKE_HIDDEN})` : keyFile}: ${error.message}`);
    }
  } else if (keyEnv !== undefined) {
    if (typeof keyEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv))
      return fail('api_key_env', 'expected the name of an environment variable, e.g. ADOPS_KEY_NORTH');
    apiKey = env[keyEnv];
    if (apiKey === undefined || apiKey === '')
      fail(
        'api_key_env',
        `${mayHoldKey(keyEnv) ? `the variable it names (${KEY_LIKE_HIDDEN})` : keyEnv} is not set`,
      );
  } else
    fail(
      'api_key_file',
      'missing: set api_key_file (a file holding the key) or api_key_env (a variable holding it)',
    );
  // Never echo the key: the message names the field and the rule only. Every way here set apiKey or failed.
  const key = apiKey ?? '';
  if (keyProblem(key) !== undefined)
    fail(
      keyFile !== undefined ? 'api_key_file' : 'api_key_env',
      'the key is empty or holds whitespace or control characters',
    );

  // Each field, in SERVER_FIELDS' order, defaults to the environment's setting.
  const choice = <T extends string>(field: string, { oneOf }: { oneOf: readonly T[] }, fallback: T): T => {
    const value = o[field] ?? fallback;
    return oneOf.find((c) => c === value) ?? fail(field, `expected one of: ${oneOf.join(', ')}`);
  };
  const whole = (
    field: string,
    { range }: Pick<Required<ServerField>, 'range'>,
    fallback: number,
  ): number => {
    const value = o[field] ?? fallback;
    return isWhole(value, range[0], range[1])
      ? value
      : fail(field, `expected a whole number of ${range[2]} from ${range[0]} to ${range[1]}`);
  };
  const F = SERVER_FIELDS;
  const server: ServerSettings = {
    auth: choice('auth', F.auth, defaults.auth),
    reportParams: choice('report_params', F.report_params, defaults.reportParams),
    compression: choice('compression', F.compression, defaults.compression),
    rateLimitPerSecond: whole('rate_limit', F.rate_limit, defaults.rateLimitPerSecond),
    connections: whole('connections', F.connections, defaults.connections),
    headersTimeoutMs: whole('headers_timeout_ms', F.headers_timeout_ms, defaults.headersTimeoutMs),
    bodyTimeoutMs: whole('body_timeout_ms', F.body_timeout_ms, defaults.bodyTimeoutMs),
    daysPerRequest: whole('days_per_request', F.days_per_request, defaults.daysPerRequest),
  };
  const timezone = o.timezone ?? 'UTC';
  if (typeof timezone !== 'string' || !isTimeZone(timezone))
    return fail(
      'timezone',
      `${JSON.stringify(timezone)} is not an IANA time zone; expected e.g. UTC, Europe/Berlin`,
    );
  const reports = o.reports;
  if (reports !== undefined && (!Array.isArray(reports) || reports.some((r) => typeof r !== 'string')))
    fail('reports', 'expected a list of report names, e.g. [daily_campaign, hourly]');
  const start = o.start_date ?? undefined;
  const startProblem = start === undefined ? undefined : planDateProblem(start);
  if (startProblem !== undefined) fail('start_date', startProblem);
  return Object.freeze({
    name,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey: key,
    ...(typeof keyEnv === 'string' ? { apiKeyEnv: keyEnv } : {}),
    ...server,
    timezone,
    reports: reports === undefined ? undefined : Object.freeze([...(reports as string[])]),
    ...(typeof start === 'string' ? { startDate: start } : {}),
  });
}

/** Why `key` cannot be an API key (`empty`, `whitespace`), or undefined. Never echoes the key. */
export function keyProblem(key: string): 'empty' | 'whitespace' | undefined {
  if (key.length === 0) return 'empty';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what we reject
  return /[\s\u0000-\u001f\u007f]/.test(key) ? 'whitespace' : undefined;
}

/** The key a key file holds (one trailing line break dropped); a ConfigError when it cannot be read. */
export function readKeyFile(path: string, maxBytes: number): string {
  return readBoundedFile(path, maxBytes, 'a file holding the key').replace(/\r?\n$/, '');
}

/** Refuses an account's `reports` entry that names no report definition. */
export function checkAccountReports(
  accounts: readonly Account[],
  reportNames: ReadonlySet<string>,
  file: string,
): void {
  for (const a of accounts)
    for (const r of a.reports ?? [])
      if (!reportNames.has(r))
        throw new ConfigError(
          `${file}: account "${a.name}": reports: "${r}" is not a report definition; defined: ${[...reportNames].join(', ')}`,
          `${file}: ${a.name}.reports`,
        );
}

export function runsReport(account: Pick<Account, 'reports'>, report: string): boolean {
  return account.reports === undefined || account.reports.includes(report);
}

/** The accounts a command works on: the one `--account` names (ConfigError if none), else all. */
export function selectAccounts(accounts: readonly Account[], flag: string | undefined): Account[] {
  if (flag === undefined) return [...accounts];
  const name = checkAccountName(flag, '--account');
  const found = accounts.find((a) => a.name === name);
  if (found === undefined)
    throw new ConfigError(
      `--account ${name}: no such account; configured: ${accounts.map((a) => a.name).join(', ')}`,
      '--account',
    );
  return [found];
}

/** The one account of a command that works on one (pull, sync): `--account`, or the only one. */
export function oneAccount(accounts: readonly Account[], flag: string | undefined): Account {
  const chosen = selectAccounts(accounts, flag);
  const [only] = chosen;
  if (chosen.length !== 1 || only === undefined)
    throw new ConfigError(
      `${chosen.length} accounts are configured (${chosen.map((a) => a.name).join(', ')}): say which with --account NAME`,
      '--account',
    );
  return only;
}
