import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, requireApiKey, requireBaseUrl } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('puts the queues on Redis unless ADOPS_QUEUE=postgres, in <ADOPS_SCHEMA>_queue, a prefix of its own apart', () => {
    expect(loadConfig({}).queue).toMatchObject({ backend: 'redis', schema: 'adops_queue' });
    const pg = loadConfig({ ADOPS_QUEUE: 'postgres', ADOPS_SCHEMA: 'acme' }).queue;
    expect(pg).toMatchObject({ backend: 'postgres', schema: 'acme_queue' });
    const other = loadConfig({ ADOPS_QUEUE: 'postgres', ADOPS_SCHEMA: 'acme', ADOPS_QUEUE_PREFIX: 'eu' });
    expect(other.queue.schema).toMatch(/^acme_queue_[0-9a-f]{12}$/);
  });

  it("refuses on the Postgres queue an ADOPS_SCHEMA whose queue schema would pass Postgres' 63-byte name limit", () => {
    const longest = 'a'.repeat(57);
    expect(loadConfig({ ADOPS_QUEUE: 'postgres', ADOPS_SCHEMA: longest }).queue.schema).toHaveLength(63);
    const error = configError({ ADOPS_QUEUE: 'postgres', ADOPS_SCHEMA: `${longest}b` });
    expect(error.subject).toBe('ADOPS_SCHEMA');
    expect(error.message).toBe(
      `ADOPS_SCHEMA="${longest}b" is too long for ADOPS_QUEUE=postgres: its queue schema "${longest}b_queue" ` +
        "would be 64 bytes, over Postgres' 63-byte limit for a name; use an ADOPS_SCHEMA of at most 57 characters",
    );
    // Another prefix adds a 12-hex suffix: the bound is shorter.
    const eu = { ADOPS_QUEUE: 'postgres', ADOPS_QUEUE_PREFIX: 'eu' };
    expect(loadConfig({ ...eu, ADOPS_SCHEMA: 'a'.repeat(44) }).queue.schema).toHaveLength(63);
    expect(configError({ ...eu, ADOPS_SCHEMA: 'a'.repeat(45) }).message).toMatch(
      /would be 64 bytes, .*at most 44 characters$/,
    );
    // On Redis the queue schema is never created: the name may be as long as SQL allows.
    expect(loadConfig({ ADOPS_SCHEMA: 'a'.repeat(63) }).schema).toHaveLength(63);
  });

  it('refuses an ADOPS_QUEUE other than redis or postgres, naming the variable', () => {
    const error = configError({ ADOPS_QUEUE: 'kafka' });
    expect(error.subject).toBe('ADOPS_QUEUE');
    expect(error.message).toBe('ADOPS_QUEUE="kafka" is invalid: expected one of: redis, postgres');
  });

  it('reads how long a wait rides out a Redis outage from ADOPS_REDIS_OUTAGE_SECONDS', () => {
    expect(loadConfig({ ADOPS_REDIS_OUTAGE_SECONDS: '30' }).queue.redisOutageSeconds).toBe(30);
  });

  it('applies the documented defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.baseUrl).toBeUndefined();
    expect(c.apiKey).toBeUndefined();
    expect(c.auth).toBe('bearer');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.schema).toBe('adops');
    expect(c.jobsDir).toBe('./jobs');
    expect(c.logLevel).toBe('info');
    expect(c.http.attempts).toBe(5);
    expect(c.queue.pullAttempts).toBe(8);
    expect(c.queue.redisOutageSeconds).toBe(120);
    expect(c.rawRetentionDays).toBe(30);
    expect(c.reportParams).toBe('repeat');
    expect(c.http.compression).toBe('gzip');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads the request form and compression the spec leaves open', () => {
    for (const form of ['repeat', 'brackets', 'comma', 'json-body'] as const)
      expect(loadConfig({ ADOPS_REPORT_PARAMS: form }).reportParams).toBe(form);
    expect(loadConfig({ ADOPS_HTTP_COMPRESSION: 'none' }).http.compression).toBe('none');
  });

  it('reads the body limit, 500 MB by default', () => {
    expect(loadConfig({}).http).toMatchObject({ maxBodyMb: 500 });
    expect(loadConfig({ ADOPS_MAX_BODY_MB: '40' }).http).toMatchObject({ maxBodyMb: 40 });
  });

  it('caps a Retry-After at 15 minutes by default, ADOPS_MAX_RETRY_AFTER_SECONDS otherwise', () => {
    expect(loadConfig({}).http.retryAfterCapMs).toBe(15 * 60_000);
    expect(loadConfig({ ADOPS_MAX_RETRY_AFTER_SECONDS: '120' }).http.retryAfterCapMs).toBe(120_000);
  });

  it('gives each API request 30 minutes to answer in full by default, ADOPS_HTTP_REQUEST_TIMEOUT_MS otherwise', () => {
    expect(loadConfig({}).http.requestTimeoutMs).toBe(30 * 60_000);
    expect(loadConfig({ ADOPS_HTTP_REQUEST_TIMEOUT_MS: '90000' }).http.requestTimeoutMs).toBe(90_000);
  });

  it("reads bi_campaign_pacing's report and bands, 0.9 and 1.1 by default, refusing bands out of order", () => {
    expect(loadConfig({}).pacing).toEqual({ behind: 0.9, ahead: 1.1 });
    expect(
      loadConfig({
        ADOPS_PACING_REPORT: 'daily_creative',
        ADOPS_PACING_BEHIND: '0.8',
        ADOPS_PACING_AHEAD: '1.25',
      }).pacing,
    ).toEqual({ report: 'daily_creative', behind: 0.8, ahead: 1.25 });
    expect(configError({ ADOPS_PACING_BEHIND: '90%' }).message).toMatch(
      /ADOPS_PACING_BEHIND="90%" is invalid: expected a decimal ratio such as 0.9/,
    );
    expect(configError({ ADOPS_PACING_BEHIND: '1.2' }).message).toMatch(
      /ADOPS_PACING_BEHIND=1.2 is above ADOPS_PACING_AHEAD=1.1/,
    );
    expect(configError({ ADOPS_PACING_REPORT: 'Daily' }).message).toMatch(/ADOPS_PACING_REPORT/);
  });

  it('reads every contract variable', () => {
    const c = loadConfig({
      ADOPS_BASE_URL: 'https://acme.api.example.com/v2/',
      ADOPS_API_KEY: 'k-123456',
      ADOPS_AUTH: 'x-api-key',
      DATABASE_URL: 'postgres://u@h:5432/db',
      REDIS_URL: 'redis://r:6380',
      ADOPS_SCHEMA: 'ads_wh',
      ADOPS_JOBS_DIR: '/etc/adops/jobs',
      LOG_LEVEL: 'debug',
      ADOPS_HTTP_ATTEMPTS: '3',
    });
    expect(c).toMatchObject({
      baseUrl: 'https://acme.api.example.com/v2',
      apiKey: 'k-123456',
      auth: 'x-api-key',
      databaseUrl: 'postgres://u@h:5432/db',
      redisUrl: 'redis://r:6380',
      schema: 'ads_wh',
      jobsDir: '/etc/adops/jobs',
      logLevel: 'debug',
    });
    expect(c.http.attempts).toBe(3);
  });

  it.each([
    ['ADOPS_AUTH', 'basic', /ADOPS_AUTH="basic" is invalid: expected one of: bearer, x-api-key/],
    [
      'ADOPS_REPORT_PARAMS',
      'php',
      /ADOPS_REPORT_PARAMS="php" is invalid: expected one of: repeat, brackets, comma, json-body/,
    ],
    ['ADOPS_HTTP_COMPRESSION', 'br', /ADOPS_HTTP_COMPRESSION="br" is invalid: expected one of: gzip, none/],
    [
      'ADOPS_MAX_BODY_MB',
      '1.5GB',
      /ADOPS_MAX_BODY_MB="1.5GB" is invalid: expected a whole number from 1 to 4000/,
    ],
    ['ADOPS_MAX_BODY_MB', '0', /ADOPS_MAX_BODY_MB="0" is invalid: expected at least 1/],
    ['ADOPS_BASE_URL', 'https://acme.example.com/v1', /ADOPS_BASE_URL=.*ending in \/v2/],
    ['ADOPS_BASE_URL', 'not a url', /ADOPS_BASE_URL=.*URL/],
    ['ADOPS_SCHEMA', 'Robert"); DROP TABLE x;--', /ADOPS_SCHEMA=.*lower-case SQL identifier/],
    ['ADOPS_SCHEMA', 'pg_temp', /ADOPS_SCHEMA="pg_temp" is invalid: .*pg_\* and information_schema/],
    ['ADOPS_SCHEMA', 'pg_catalog', /ADOPS_SCHEMA="pg_catalog" is invalid: .*Postgres' own schemas/],
    ['ADOPS_SCHEMA', 'pg_', /ADOPS_SCHEMA="pg_" is invalid: .*Postgres' own schemas/],
    ['ADOPS_SCHEMA', 'information_schema', /ADOPS_SCHEMA="information_schema" is invalid/],
    ['LOG_LEVEL', 'verbose', /LOG_LEVEL="verbose" is invalid: expected one of: fatal, error/],
    [
      'ADOPS_REDIS_OUTAGE_SECONDS',
      '2m',
      /ADOPS_REDIS_OUTAGE_SECONDS="2m" is invalid: expected a whole number/,
    ],
    ['ADOPS_REDIS_OUTAGE_SECONDS', '0', /ADOPS_REDIS_OUTAGE_SECONDS="0" is invalid: expected at least 1/],
    ['REDIS_URL', 'localhost:6379', /REDIS_URL=.*redis:\/\//],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL=.*postgres/],
    ['ADOPS_HTTP_ATTEMPTS', '0', /ADOPS_HTTP_ATTEMPTS="0" is invalid: expected at least 1/],
    [
      'ADOPS_HTTP_REQUEST_TIMEOUT_MS',
      '999',
      /ADOPS_HTTP_REQUEST_TIMEOUT_MS="999" is invalid: expected at least 1000/,
    ],
    [
      'ADOPS_MAX_RETRY_AFTER_SECONDS',
      '0',
      /ADOPS_MAX_RETRY_AFTER_SECONDS="0" is invalid: expected at least 1/,
    ],
    // A day: far beyond any real pause, and well inside what a Node timer holds (24.8 days).
    [
      'ADOPS_MAX_RETRY_AFTER_SECONDS',
      '86401',
      /ADOPS_MAX_RETRY_AFTER_SECONDS="86401" is invalid: expected at most 86400/,
    ],
    [
      'ADOPS_HTTP_ATTEMPTS',
      'five',
      /ADOPS_HTTP_ATTEMPTS="five" is invalid: expected a whole number from 1 to 100/,
    ],
  ])('rejects %s=%s naming the variable and what is allowed', (name, value, message) => {
    const error = configError({ [name]: value });
    expect(error.subject).toBe(name);
    expect(error.message).toMatch(message);
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it('reads the key from ADOPS_API_KEY_FILE, trimming the trailing newline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adops-key-'));
    const file = join(dir, 'key');
    writeFileSync(file, 'file-key-abc\n');
    expect(loadConfig({ ADOPS_API_KEY_FILE: file }).apiKey).toBe('file-key-abc');
  });

  it('names ADOPS_API_KEY_FILE when the file cannot be read, without printing any key', () => {
    const error = configError({ ADOPS_API_KEY_FILE: '/nonexistent/key' });
    expect(error.message).toMatch(/ADOPS_API_KEY_FILE=\/nonexistent\/key cannot be read \(ENOENT\)/);
  });

  it('refuses both key variables at once and never echoes the key', () => {
    const error = configError({ ADOPS_API_KEY: 'secret-value-1', ADOPS_API_KEY_FILE: '/x' });
    expect(error.message).toMatch(/both set/);
    expect(error.message).not.toContain('secret-value-1');
  });

  it('refuses a key with whitespace inside without echoing it', () => {
    const error = configError({ ADOPS_API_KEY: 'abc def-secret' });
    expect(error.message).not.toContain('def-secret');
  });

  it('requireApiKey and requireBaseUrl say how to provide what is missing', () => {
    const c = loadConfig({});
    expect(() => requireApiKey(c)).toThrow(/set ADOPS_API_KEY or ADOPS_API_KEY_FILE/);
    expect(() => requireBaseUrl(c)).toThrow(/ADOPS_BASE_URL is missing/);
  });
});
