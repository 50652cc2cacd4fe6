import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { ConfigError } from '../../../src/config/files.js';
import { describeRedisTarget } from '../../../src/config/connections.js';

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
