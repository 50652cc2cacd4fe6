// DATABASE_URL and REDIS_URL are validated in full at start: a malformed one is one line naming the
// variable and the form expected (exit 2), never a stack trace from pg or ioredis later on.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { ConfigError } from '../../../src/config/files.js';

function refusal(name: string, value: string): ConfigError {
  try {
    loadConfig({ [name]: value });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`${name}=${value} was accepted`);
}

describe('REDIS_URL', () => {
  it.each([
    'redis://127.0.0.1:6379',
    'redis://redis:6379',
    'redis://host',
    'redis://host/',
    'redis://host:6379/0',
    'redis://host:6379/15',
    'rediss://user:pass@cache.example.com:6380/3',
    'redis://:pass@host:6379/2',
    'redis://[::1]:6379/1',
    // ioredis reads its options from the query: the two that say where to connect are honoured.
    'redis://host:6379?db=2',
    'redis://host:6379/?family=6',
    'redis://host:6379/0?family=0',
  ])('accepts %s', (url) => {
    expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
  });

  it.each([
    ['redis://host/abc', /the database "abc" is not a whole number/],
    ['redis://host:6379/-1', /the database "-1" is not a whole number/],
    ['redis://host:6379/1/2', /the database "1\/2" is not a whole number/],
    ['redis://host:6379/1.5', /the database "1.5" is not a whole number/],
    ['redis://host:99999', /not a valid URL/],
    ['redis://host:0', /the port 0 is not from 1 to 65535/],
    ['redis://:6379', /not a valid URL/],
    ['redis:///0', /it names no host/],
    ['redis://%zz@host:6379', /bad percent-encoding in the user name/],
    ['redis://[::1', /not a valid URL/],
    ['http://host:6379', /the scheme "http:" is not redis: or rediss:/],
    ['host:6379', /the scheme "host:" is not redis: or rediss:/],
    ['redis://host:6379/0#x', /a fragment/],
    // Any other query parameter would silently become an ioredis option (a string where a number
    // or an object is expected): refused, naming it and the two that are read.
    ['redis://host:6379?tls=true', /the query parameter "tls" is not read: only db and family are/],
    ['redis://host:6379?maxRetriesPerRequest=0', /the query parameter "maxRetriesPerRequest"/],
    ['redis://host:6379/0?timeout=5', /the query parameter "timeout"/],
    ['redis://host:6379?family=5', /family "5" is not 0, 4 or 6/],
    ['redis://host:6379/1?db=2', /the database is given twice/],
    ['redis://host:6379?db=1&db=2', /the database is given twice/],
  ])('refuses %s in one line naming the variable and the form', (url, why) => {
    const error = refusal('REDIS_URL', url);
    expect(error.subject).toBe('REDIS_URL');
    expect(error.message).toMatch(/^REDIS_URL=".*" is invalid: expected redis:\/\/ or rediss:\/\//);
    expect(error.message).toMatch(why);
    expect(error.message).not.toContain('\n');
  });
});

describe('DATABASE_URL', () => {
  it.each([
    'postgres://root@127.0.0.1:5432/adops',
    'postgresql://user:pass@db.example.com/adops',
    'postgres://db/adops?sslmode=require&application_name=x',
    'postgres://[::1]:5432/adops',
    'postgresql://db',
    'postgres:///adops?host=/var/run/postgresql',
    'postgres://us%40er:p%2Fss@db/ad%20ops',
  ])('accepts %s', (url) => {
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
  });

  it.each([
    ['postgres://[::1', /not a valid URL/],
    ['postgres://db:99999/adops', /not a valid URL/],
    ['postgres://db:0/adops', /the port 0 is not from 1 to 65535/],
    [
      'postgres://db/adops?sslmode=bogus',
      /sslmode "bogus" is not one of: disable, prefer, require, verify-ca, verify-full/,
    ],
    ['postgres://%zz@db/adops', /bad percent-encoding in the user name/],
    ['postgres://db/ad%zzops', /bad percent-encoding in the database name/],
    ['postgres://db/adops/more', /the database name "adops\/more" holds a \//],
    ['mysql://db/adops', /the scheme "mysql:" is not postgres: or postgresql:/],
    ['postgres://db/adops#frag', /a fragment/],
  ])('refuses %s in one line naming the variable and the form', (url, why) => {
    const error = refusal('DATABASE_URL', url);
    expect(error.subject).toBe('DATABASE_URL');
    expect(error.message).toMatch(/^DATABASE_URL=".*" is invalid: expected postgres:\/\/ or postgresql:\/\//);
    expect(error.message).toMatch(why);
    expect(error.message).not.toContain('\n');
  });
});

describe('a refused connection URL', () => {
  it.each([
    ['DATABASE_URL', 'postgres://adops:s3cret-pw@db:0/adops'],
    ['REDIS_URL', 'redis://:s3cret-pw@host:6379/abc'],
    ['DATABASE_URL', 'postgres://adops:s3cret-pw@[::1/adops'],
    ['REDIS_URL', 'redis://host:6379?password=s3cret-pw'],
    ['DATABASE_URL', 'postgres://db:0/adops?password=s3cret-pw&sslmode=require'],
  ])('%s never shows its password in the message', (name, url) => {
    const error = refusal(name, url);
    expect(error.message).not.toContain('s3cret-pw');
    expect(error.message).toContain('***');
  });
});

describe('ADOPS_BASE_URL', () => {
  it.each(['https://acme.api.example.com/v2', 'http://127.0.0.1:8080/v2/', 'https://[::1]:8443/api/v2'])(
    'accepts %s',
    (url) => {
      expect(loadConfig({ ADOPS_BASE_URL: url }).baseUrl).toBe(url.replace(/\/$/, ''));
    },
  );

  it.each([
    // Read as host "v2" by the URL parser, which the raw text hid.
    ['https:///v2', /ending in \/v2/],
    ['https://host:0/v2', /the port 0 is not from 1 to 65535/],
    // The key belongs in ADOPS_API_KEY: a password in the URL would travel into logs and messages.
    ['https://user:s3cret-pw@host/v2', /no user or password in the URL/],
  ])('refuses %s in one line naming the variable', (url, why) => {
    const error = refusal('ADOPS_BASE_URL', url);
    expect(error.subject).toBe('ADOPS_BASE_URL');
    expect(error.message).toMatch(/^ADOPS_BASE_URL=".*" is invalid: expected /);
    expect(error.message).toMatch(why);
    expect(error.message).not.toContain('s3cret-pw');
  });
});
