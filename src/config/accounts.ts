// Accounts: one deployment pulls several ad server accounts into one warehouse. An account's name
// is stored in every row it owns (the `account` column) and named in every job id, lock and
// rate-limit key, so it is validated like a report name. ADOPS_ACCOUNTS_FILE lists them; without
// it the single-account env settings (ADOPS_BASE_URL, ADOPS_API_KEY, ...) are account `default`.
import { dirname, resolve } from 'node:path';
import { isTimeZone } from '../dates/calendar.js';
import { FileRefused, readBoundedFile } from './bounded-file.js';
import { BASE_URL_FORM, baseUrlProblem } from './connection-urls.js';
import { ConfigError } from './errors.js';
import { parseConfigYaml } from './yaml-file.js';
import { checkServerValue, SERVER_FIELDS, type ServerField, type ServerSettings } from './server-settings.js';

/** The account of a deployment without ADOPS_ACCOUNTS_FILE, and of rows written before accounts. */
export const DEFAULT_ACCOUNT = 'default';

/** An account's name: like a report's (lower case letter, then up to 40 lower case letters, digits or _). */
export const ACCOUNT_NAME = /^[a-z][a-z0-9_]{0,40}$/;

/** One ad server account: where its API is, its key, and how its server is spoken to. */
export interface Account extends ServerSettings {
  readonly name: string;
  /** API base URL ending in /v2; undefined only for the env account before a command needs it. */
  readonly baseUrl: string | undefined;
  /** The account's API key; never logged, never in Redis or Postgres. */
  readonly apiKey: string | undefined;
  /**
   * The account's IANA time zone (UTC by default), as the accounts file records it. Planning still
   * follows each report's schedule time zone.
   */
  readonly timezone: string;
  /** Reports this account runs; undefined: every report definition. */
  readonly reports: readonly string[] | undefined;
}

/** The name if valid; otherwise ConfigError naming `subject` (the flag, or `file: field`). */
export function checkAccountName(name: unknown, subject: string): string {
  if (typeof name !== 'string' || !ACCOUNT_NAME.test(name))
    throw new ConfigError(
      `${subject}: ${JSON.stringify(name) ?? String(name)} is not an account name; expected ${ACCOUNT_NAME.source} ` +
        '(lower case letter, then up to 40 lower case letters, digits or _)',
      subject,
    );
  return name;
}

/** Bytes an accounts file or a key file may hold. */
const MAX_FILE_BYTES = 256 * 1024;
const ACCOUNT_KEYS = new Set([
  'name',
  'base_url',
  'api_key_file',
  'api_key_env',
  ...Object.keys(SERVER_FIELDS),
  'timezone',
  'reports',
]);

/** The single-account settings of the environment (its server settings among them), as account `default`. */
export function envAccount(settings: Omit<Account, 'name' | 'reports' | 'timezone'>): Account {
  return Object.freeze({ ...settings, name: DEFAULT_ACCOUNT, timezone: 'UTC', reports: undefined });
}

/**
 * The accounts of ADOPS_ACCOUNTS_FILE (a YAML list, or a mapping with `accounts:`), each checked;
 * ConfigError names the file, the account and the field. `env` resolves `api_key_env`, a
 * relative `api_key_file` is taken from the accounts file's folder, and each server setting an
 * account leaves out is taken from `defaults` (the environment's).
 */
export function readAccountsFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  defaults: ServerSettings,
): Account[] {
  const where = `ADOPS_ACCOUNTS_FILE=${path}`;
  let text: string;
  try {
    text = readBoundedFile(path, MAX_FILE_BYTES, 'an accounts file');
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
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
  const seen = new Set<string>();
  for (const a of accounts) {
    if (seen.has(a.name))
      throw new ConfigError(
        `${path}: account "${a.name}" is listed twice; names must be unique`,
        `${path}: name`,
      );
    seen.add(a.name);
  }
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
    if (!ACCOUNT_KEYS.has(key)) {
      if (/^(api_?)?key$|^api_key$|token|secret/i.test(key))
        fail(key, 'an API key is never written into the accounts file; use api_key_file or api_key_env');
      fail(key, `unknown field; allowed: ${[...ACCOUNT_KEYS].join(', ')}`);
    }

  const baseUrl = o.base_url;
  if (typeof baseUrl !== 'string') fail('base_url', `missing; expected ${BASE_URL_FORM}`);
  const urlProblem = baseUrlProblem(baseUrl as string);
  if (urlProblem !== undefined) fail('base_url', `${BASE_URL_FORM}: ${urlProblem}`);

  const keyFile = o.api_key_file;
  const keyEnv = o.api_key_env;
  if (keyFile !== undefined && keyEnv !== undefined)
    fail('api_key_file', 'api_key_env is set too: set only one');
  let apiKey: string | undefined;
  if (keyFile !== undefined) {
    if (typeof keyFile !== 'string' || keyFile === '')
      fail('api_key_file', 'expected the path of a file holding the key');
    try {
      apiKey = readBoundedFile(
        resolve(dirname(path), keyFile as string),
        MAX_FILE_BYTES,
        'a file holding the key',
      ).replace(/\r?\n$/, '');
    } catch (error) {
      if (!(error instanceof FileRefused)) throw error;
      fail('api_key_file', `${keyFile as string}: ${error.message}`);
    }
  } else if (keyEnv !== undefined) {
    if (typeof keyEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv))
      fail('api_key_env', 'expected the name of an environment variable, e.g. ADOPS_KEY_NORTH');
    apiKey = env[keyEnv as string];
    if (apiKey === undefined || apiKey === '') fail('api_key_env', `${keyEnv as string} is not set`);
  } else
    fail(
      'api_key_file',
      'missing: set api_key_file (a file holding the key) or api_key_env (a variable holding it)',
    );
  // Never echo the key: the message names the field and the rule only.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what we reject
  if (apiKey === '' || /[\s\u0000-\u001f\u007f]/.test(apiKey as string))
    fail(
      keyFile !== undefined ? 'api_key_file' : 'api_key_env',
      'the key is empty or holds whitespace or control characters',
    );

  const server: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(SERVER_FIELDS) as [string, ServerField][])
    server[spec.setting] = checkServerValue(o[field] ?? defaults[spec.setting], spec, (m) => fail(field, m));
  const timezone = o.timezone ?? 'UTC';
  if (typeof timezone !== 'string' || !isTimeZone(timezone))
    fail(
      'timezone',
      `${JSON.stringify(timezone)} is not an IANA time zone; expected e.g. UTC, Europe/Berlin`,
    );
  let reports: string[] | undefined;
  if (o.reports !== undefined) {
    if (!Array.isArray(o.reports) || o.reports.some((r) => typeof r !== 'string'))
      fail('reports', 'expected a list of report names, e.g. [daily_campaign, hourly]');
    reports = [...(o.reports as string[])];
  }
  return Object.freeze({
    name,
    baseUrl: (baseUrl as string).replace(/\/+$/, ''),
    apiKey: apiKey as string,
    ...(server as unknown as ServerSettings),
    timezone: timezone as string,
    reports: reports === undefined ? undefined : Object.freeze(reports),
  });
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

/** Whether `account` runs `report`. */
export function runsReport(account: Pick<Account, 'reports'>, report: string): boolean {
  return account.reports === undefined || account.reports.includes(report);
}

/**
 * The accounts a command works on: the one `--account` names (ConfigError when none has that
 * name), else every account.
 */
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
  if (chosen.length !== 1)
    throw new ConfigError(
      `${chosen.length} accounts are configured (${chosen.map((a) => a.name).join(', ')}): say which with --account NAME`,
      '--account',
    );
  return chosen[0] as Account;
}
