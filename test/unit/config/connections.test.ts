// The connection settings of src/platform/config/connections.ts: the URL forms refused in one line, and the
// Redis target (one server, Sentinel, Cluster) read from the environment.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';
import { describeRedisTarget } from '../../../src/platform/config/connections.js';

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

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('Redis targets', () => {
  it('is one server from REDIS_URL by default, with the prefix as given', () => {
    const c = loadConfig({ REDIS_URL: 'redis://:pw@r:6380/2' });
    expect(c.redis).toEqual({ kind: 'single', url: 'redis://:pw@r:6380/2' });
    expect(c.queue.prefix).toBe('adops');
    expect(describeRedisTarget(c.redis)).toBe('redis://:***@r:6380/2');
  });

  it('reads REDIS_SENTINELS, the master name and both passwords', () => {
    const c = loadConfig({
      REDIS_SENTINELS: 's1:26379, s2:26380,[::1]:5000,s3',
      REDIS_SENTINEL_MASTER: 'mymaster',
      REDIS_PASSWORD: 'data-secret',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    });
    expect(c.redis).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
        { host: '::1', port: 5000 },
        { host: 's3', port: 26379 },
      ],
      master: 'mymaster',
      db: 0,
      username: undefined,
      password: 'data-secret',
      sentinelPassword: 'sentinel-secret',
    });
    expect(c.queue.prefix).toBe('adops');
    const shown = describeRedisTarget(c.redis);
    expect(shown).toBe('Sentinel master "mymaster" via s1:26379,s2:26380,[::1]:5000,s3:26379');
    expect(shown).not.toMatch(/secret/);
  });

  it('reads the redis+sentinel:// URL form, its password and database', () => {
    const c = loadConfig({ REDIS_URL: 'redis+sentinel://:p%40ss@h1:26379,h2:26379/main/3' });
    expect(c.redis).toMatchObject({
      kind: 'sentinel',
      sentinels: [
        { host: 'h1', port: 26379 },
        { host: 'h2', port: 26379 },
      ],
      master: 'main',
      db: 3,
      password: 'p@ss',
      username: undefined,
    });
    expect(describeRedisTarget(c.redis)).toBe('Sentinel master "main" via h1:26379,h2:26379 (database 3)');
  });

  it('reads REDIS_CLUSTER_NODES and hash-tags the queue prefix so a queue keeps to one slot', () => {
    const c = loadConfig({
      REDIS_CLUSTER_NODES: 'n1:7000,n2',
      ADOPS_QUEUE_PREFIX: 'acme',
      REDIS_PASSWORD: 'x',
    });
    expect(c.redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 6379 },
      ],
      username: undefined,
      password: 'x',
    });
    expect(c.queue.prefix).toBe('{acme}');
  });

  it.each([
    [{ REDIS_SENTINELS: 's1:26379' }, 'REDIS_SENTINEL_MASTER', /REDIS_SENTINEL_MASTER is missing/],
    [{ REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINEL_MASTER', /without REDIS_SENTINELS/],
    [
      { REDIS_SENTINELS: 's1:99999', REDIS_SENTINEL_MASTER: 'm' },
      'REDIS_SENTINELS',
      /REDIS_SENTINELS="s1:99999" is invalid: expected a comma-separated list of host:port.*: the port of "s1:99999" is not from 1 to 65535/,
    ],
    [{ REDIS_SENTINELS: 's1:1,,s2:2', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINELS', /empty entry/],
    [
      { REDIS_SENTINELS: 's1:1', REDIS_SENTINEL_MASTER: 'my master' },
      'REDIS_SENTINEL_MASTER',
      /REDIS_SENTINEL_MASTER="my master" is invalid/,
    ],
    [{ REDIS_CLUSTER_NODES: 'http://n1:7000' }, 'REDIS_CLUSTER_NODES', /is not host:port/],
    [{ REDIS_CLUSTER_NODES: 'n1:7000,n1:7000' }, 'REDIS_CLUSTER_NODES', /listed twice/],
    [
      { REDIS_CLUSTER_NODES: 'n1:7000', REDIS_SENTINELS: 's:1', REDIS_SENTINEL_MASTER: 'm' },
      'REDIS_CLUSTER_NODES',
      /both set: set only one/,
    ],
    [
      { REDIS_CLUSTER_NODES: 'n1:7000', REDIS_URL: 'redis://r:6379' },
      'REDIS_URL',
      /REDIS_URL and REDIS_CLUSTER_NODES/,
    ],
    [
      { REDIS_PASSWORD: 'pw' },
      'REDIS_PASSWORD',
      /plain redis:\/\/ URL: put the user and password in REDIS_URL/,
    ],
    [{ REDIS_SENTINEL_PASSWORD: 'pw' }, 'REDIS_SENTINEL_PASSWORD', /no Sentinel is configured/],
    [
      { REDIS_URL: 'redis+sentinel://:a@h:1/m', REDIS_PASSWORD: 'b' },
      'REDIS_PASSWORD',
      /REDIS_URL holds one too/,
    ],
    [{ REDIS_URL: 'redis+sentinel://h1:26379' }, 'REDIS_URL', /names no master/],
    [{ REDIS_URL: 'redis+sentinel://h1:26379/m/x' }, 'REDIS_URL', /the database "x" is not a whole number/],
    [{ REDIS_URL: 'redis+sentinel://h1:26379/m/0/9' }, 'REDIS_URL', /more than a master name/],
    [{ REDIS_URL: 'redis+sentinel:///m' }, 'REDIS_URL', /names no host/],
  ])('refuses %j naming %s and what is wrong', (env, subject, message) => {
    const error = configError(env);
    expect(error.subject).toBe(subject);
    expect(error.message).toMatch(message);
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it('never shows a password in an error', () => {
    const cases: Array<Record<string, string>> = [
      { REDIS_URL: 'redis+sentinel://:hunter2secret@h1:26379,h2:bad/m' },
      { REDIS_URL: 'redis+sentinel://:hunter2secret@h1:26379' },
      { REDIS_CLUSTER_NODES: 'n1:7000', REDIS_PASSWORD: 'hunter2secret', REDIS_URL: 'redis://x' },
      { REDIS_SENTINELS: 'bad host', REDIS_SENTINEL_MASTER: 'm', REDIS_SENTINEL_PASSWORD: 'hunter2secret' },
    ];
    for (const env of cases) {
      const error = configError(env);
      expect(error.message).not.toContain('hunter2secret');
    }
  });
});
