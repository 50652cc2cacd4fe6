import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { oneAccount, runsReport, selectAccounts } from '../../../src/platform/config/accounts.js';
import { accountConfig, loadConfig, secretsOf } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';

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
  it('read start_date per account, and refuse one that is not a date in the planned range', () => {
    const config = withAccounts(
      [
        `- { name: north, base_url: "http://a.example/v2", api_key_file: ${keyFile}, start_date: 2025-06-01 }`,
        `- { name: south, base_url: "http://b.example/v2", api_key_file: ${keyFile} }`,
      ].join('\n'),
    );
    expect(config.accounts.map((a) => [a.name, a.startDate])).toEqual([
      ['north', '2025-06-01'],
      ['south', undefined],
    ]);
    const bad = errorOf(() =>
      withAccounts(
        `- { name: north, base_url: "http://a.example/v2", api_key_file: ${keyFile}, start_date: 2025-13-01 }`,
      ),
    );
    expect(bad.message).toMatch(
      /: account "north": start_date: "2025-13-01" is not a calendar date: expected YYYY-MM-DD, e.g. 2025-01-01$/,
    );
  });

  it('are the env settings as account default without ADOPS_ACCOUNTS_FILE', () => {
    const config = loadConfig({
      ADOPS_BASE_URL: 'http://api.example/v2',
      ADOPS_API_KEY: 'k1',
      ADOPS_RATE_LIMIT: '7',
      ADOPS_REPORT_PARAMS: 'comma',
      ADOPS_HTTP_COMPRESSION: 'none',
    });
    expect(config.accounts).toEqual([
      {
        name: 'default',
        baseUrl: 'http://api.example/v2',
        apiKey: 'k1',
        auth: 'bearer',
        reportParams: 'comma',
        compression: 'none',
        rateLimitPerSecond: 7,
        connections: 16,
        headersTimeoutMs: 60_000,
        bodyTimeoutMs: 120_000,
        daysPerRequest: 7,
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

  it("takes each server setting from the account, else from its variable, into that account's client config", () => {
    const config = withAccounts(
      `accounts:
  - name: php
    base_url: http://php.example/v2
    api_key_env: K
    auth: x-api-key
    report_params: brackets
    compression: none
    rate_limit: 4
    connections: 2
    headers_timeout_ms: 300000
    body_timeout_ms: 1500
  - name: plain
    base_url: http://plain.example/v2
    api_key_env: K
`,
      {
        K: 'k',
        ADOPS_REPORT_PARAMS: 'comma',
        ADOPS_HTTP_CONNECTIONS: '8',
        ADOPS_HTTP_HEADERS_TIMEOUT_MS: '9000',
      },
    );
    const client = (name: string) => {
      const c = accountConfig(
        config,
        config.accounts.find((a) => a.name === name)!,
      );
      return {
        auth: c.auth,
        reportParams: c.reportParams,
        compression: c.http.compression,
        rate: c.queue.rateLimitPerSecond,
        connections: c.http.connections,
        headersTimeoutMs: c.http.headersTimeoutMs,
        bodyTimeoutMs: c.http.bodyTimeoutMs,
        // Not a server setting: the same for every account.
        attempts: c.http.attempts,
      };
    };
    expect(client('php')).toEqual({
      auth: 'x-api-key',
      reportParams: 'brackets',
      compression: 'none',
      rate: 4,
      connections: 2,
      headersTimeoutMs: 300_000,
      bodyTimeoutMs: 1500,
      attempts: 5,
    });
    expect(client('plain')).toEqual({
      auth: 'bearer',
      reportParams: 'comma',
      compression: 'gzip',
      rate: 10,
      connections: 8,
      headersTimeoutMs: 9000,
      bodyTimeoutMs: 120_000,
      attempts: 5,
    });
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
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  report_params: query\n',
      /account "n": report_params: expected one of: repeat, brackets, comma, json-body$/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  compression: br\n',
      /account "n": compression: expected one of: gzip, none$/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  connections: 0\n',
      /account "n": connections: expected a whole number of connections from 1 to 1024$/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  headers_timeout_ms: 60s\n',
      /account "n": headers_timeout_ms: expected a whole number of milliseconds from 1 to 3600000$/,
    ],
    [
      '- name: n\n  base_url: http://n.example/v2\n  api_key_env: K\n  body_timeout_ms: 1.5\n',
      /account "n": body_timeout_ms: expected a whole number of milliseconds from 1 to 3600000$/,
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
      /account "n": colour: unknown field; allowed: name, base_url, api_key_file, api_key_env, auth, report_params, compression, rate_limit, connections, headers_timeout_ms, body_timeout_ms, days_per_request, timezone, reports, start_date$/,
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
