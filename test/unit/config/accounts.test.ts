import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { oneAccount, runsReport, selectAccounts } from '../../../src/config/accounts.js';
import { accountConfig, loadConfig, secretsOf } from '../../../src/config/env.js';
import { ConfigError } from '../../../src/config/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'adops-accounts-'));
let n = 0;
/** Writes `text` to a new file of the test folder and returns its path. */
function file(text: string): string {
  const path = join(dir, `f${n++}.yaml`);
  writeFileSync(path, text);
  return path;
}

const keyFile = file('key-from-file\n');

/** loadConfig with an accounts file of `yaml`, and the ConfigError it throws, if any. */
function withAccounts(yaml: string, env: Record<string, string> = {}) {
  return loadConfig({ ADOPS_ACCOUNTS_FILE: file(yaml), ...env });
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('accounts', () => {
  it('are the env settings as account default without ADOPS_ACCOUNTS_FILE', () => {
    const config = loadConfig({
      ADOPS_BASE_URL: 'http://api.example/v2',
      ADOPS_API_KEY: 'k1',
      ADOPS_RATE_LIMIT: '7',
    });
    expect(config.accounts).toEqual([
      {
        name: 'default',
        baseUrl: 'http://api.example/v2',
        apiKey: 'k1',
        auth: 'bearer',
        rateLimitPerSecond: 7,
        timezone: 'UTC',
        reports: undefined,
      },
    ]);
    expect(oneAccount(config.accounts, undefined).name).toBe('default');
  });

  it('reads each account of the file, its key from a file or a named variable', () => {
    const config = withAccounts(
      `accounts:
  - name: north
    base_url: http://north.example/v2/
    api_key_file: ${keyFile}
    auth: x-api-key
    rate_limit: 3
    timezone: Europe/Berlin
    reports: [daily_campaign]
  - name: south
    base_url: http://south.example/v2
    api_key_env: SOUTH_KEY
`,
      { SOUTH_KEY: 'key-from-env', ADOPS_RATE_LIMIT: '9' },
    );
    expect(
      config.accounts.map((a) => [a.name, a.baseUrl, a.apiKey, a.auth, a.rateLimitPerSecond, a.timezone]),
    ).toEqual([
      ['north', 'http://north.example/v2', 'key-from-file', 'x-api-key', 3, 'Europe/Berlin'],
      ['south', 'http://south.example/v2', 'key-from-env', 'bearer', 9, 'UTC'],
    ]);
    const [north, south] = config.accounts;
    expect(runsReport(north!, 'daily_campaign')).toBe(true);
    expect(runsReport(north!, 'hourly')).toBe(false);
    expect(runsReport(south!, 'hourly')).toBe(true);
    // Every account's key is redacted wherever the config's secrets are.
    expect(secretsOf(config)).toEqual(expect.arrayContaining(['key-from-file', 'key-from-env']));
    // An account's client sees its own URL, key, auth and rate limit.
    const own = accountConfig(config, north!);
    expect([own.baseUrl, own.apiKey, own.auth, own.queue.rateLimitPerSecond]).toEqual([
      'http://north.example/v2',
      'key-from-file',
      'x-api-key',
      3,
    ]);
  });

  it('reads a relative api_key_file from the folder of the accounts file', () => {
    writeFileSync(join(dir, 'relative.key'), 'relative-key\n');
    const config = withAccounts('- { name: r, base_url: http://r.example/v2, api_key_file: relative.key }\n');
    expect(config.accounts[0]?.apiKey).toBe('relative-key');
  });

  it('selects the account --account names, every account without it, and asks for one where one is needed', () => {
    const config = withAccounts(
      `- { name: a, base_url: http://a.example/v2, api_key_env: K }\n- { name: b, base_url: http://b.example/v2, api_key_env: K }\n`,
      { K: 'k' },
    );
    expect(selectAccounts(config.accounts, undefined).map((a) => a.name)).toEqual(['a', 'b']);
    expect(selectAccounts(config.accounts, 'b').map((a) => a.name)).toEqual(['b']);
    expect(() => selectAccounts(config.accounts, 'c')).toThrow(
      '--account c: no such account; configured: a, b',
    );
    expect(() => oneAccount(config.accounts, undefined)).toThrow(
      '2 accounts are configured (a, b): say which with --account NAME',
    );
    expect(() => selectAccounts(config.accounts, 'Bad Name')).toThrow(
      /--account: "Bad Name" is not an account name/,
    );
  });

  it('refuses an inline key with an error naming the file and the account', () => {
    const path = file(`- name: north\n  base_url: http://n.example/v2\n  api_key: secret-value\n`);
    const error = errorOf(() => loadConfig({ ADOPS_ACCOUNTS_FILE: path }));
    expect(error.message).toBe(
      `${path}: account "north": api_key: an API key is never written into the accounts file; use api_key_file or api_key_env`,
    );
    expect(error.message).not.toContain('secret-value');
  });

  it.each([
    [
      '- name: North\n  base_url: http://n.example/v2\n  api_key_env: K\n',
      /account #1: name: "North" is not an account name/,
    ],
    ['- name: n\n  api_key_env: K\n', /account "n": base_url: missing; expected/],
    ['- name: n\n  base_url: ftp://n.example\n  api_key_env: K\n', /account "n": base_url: /],
    ['- name: n\n  base_url: http://n.example/v2\n', /account "n": api_key_file: missing: set api_key_file/],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: NOT_SET_ANYWHERE\n',
      /account "n": api_key_env: NOT_SET_ANYWHERE is not set/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_file: /no/such/key\n',
      /account "n": api_key_file: \/no\/such\/key: cannot be read \(ENOENT\)/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  auth: basic\n',
      /account "n": auth: expected one of: bearer, x-api-key/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  rate_limit: 0\n',
      /account "n": rate_limit: expected a whole number/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  timezone: Mars/Base\n',
      /account "n": timezone: "Mars\/Base" is not an IANA time zone/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  reports: daily\n',
      /account "n": reports: expected a list of report names/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  colour: red\n',
      /account "n": colour: unknown field; allowed: name, base_url/,
    ],
    [
      '- { name: n, base_url: http://n.example/v2, api_key_env: K }\n- { name: n, base_url: http://m.example/v2, api_key_env: K }\n',
      /account "n" is listed twice/,
    ],
    ['accounts: []\n', /expected a list of accounts/],
    ['- [not: valid\n', /not valid YAML/],
  ])('refuses %j with an error naming the file, the account and the field', (yaml, message) => {
    const path = file(yaml);
    const error = errorOf(() => loadConfig({ ADOPS_ACCOUNTS_FILE: path, K: 'k' }));
    expect(error.message).toMatch(message);
    expect(error.message).toContain(path);
  });

  it('names the variable when the file itself cannot be read', () => {
    expect(() => loadConfig({ ADOPS_ACCOUNTS_FILE: join(dir, 'missing.yaml') })).toThrow(
      /^ADOPS_ACCOUNTS_FILE=.*missing\.yaml: cannot be read \(ENOENT\)/,
    );
  });
});
