import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REDIS_HA_VARS } from '../../../src/config/connections.js';
import { ENV_SCHEMA, loadConfig } from '../../../src/config/env.js';
import { startMetricsServer } from '../../../src/observe/health-server.js';

/** Every env var the configuration reads. */
const ENV_VARS: readonly string[] = [
  ...Object.keys(ENV_SCHEMA),
  ...REDIS_HA_VARS,
  'ADOPS_API_KEY',
  'ADOPS_API_KEY_FILE',
  'ADOPS_WEBHOOK_SECRET',
  'ADOPS_ACCOUNTS_FILE',
];

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  restart?: string;
  environment?: Record<string, string>;
  ports?: (string | number | { published?: string | number })[];
  expose?: (string | number)[];
  depends_on?: Record<string, { condition: string }>;
  container_name?: string;
  deploy?: { replicas?: number };
  healthcheck?: { test?: string[]; interval?: string; retries?: number };
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const { postgres, redis, migrate, schedule, worker } = compose.services;

/** Runs the worker's healthcheck command, as Docker would, against `port` instead of 9464. */
async function runHealthcheck(port: number): Promise<number> {
  const [kind, command, ...args] = worker?.healthcheck?.test ?? [];
  expect(kind).toBe('CMD');
  expect(command).toBe('node');
  try {
    await promisify(execFile)(
      process.execPath,
      args.map((a) => a.replace('9464', String(port))),
      { timeout: 10_000 },
    );
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

describe('docker-compose.yml', () => {
  it('has postgres 16, redis 7, a one-shot migrate, a worker built from the project, Prometheus and Grafana', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'grafana',
      'migrate',
      'postgres',
      'prometheus',
      'redis',
      'schedule',
      'worker',
    ]);
    expect(postgres?.image).toBe('postgres:16');
    expect(redis?.image).toBe('redis:7');
    expect(migrate?.build).toBe('.');
    expect(migrate?.command).toEqual(['migrate', '--bi-role', 'adops_bi']);
    expect(migrate?.restart).toBe('no');
    expect(worker?.build).toBe('.');
    expect(worker?.command).toEqual(['worker']);
  });

  it('runs redis with appendonly and noeviction, as BullMQ requires', () => {
    const args = redis?.command?.join(' ') ?? '';
    expect(args).toContain('--appendonly yes');
    expect(args).toContain('--maxmemory-policy noeviction');
  });

  it('starts the worker only after migrate completed', () => {
    expect(worker?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
    expect(worker?.depends_on?.postgres?.condition).toBe('service_healthy');
  });

  it('registers the job schedulers once, after migrate, so `up -d` alone gives nightly loads', () => {
    expect(schedule?.build).toBe('.');
    expect(schedule?.command).toEqual(['schedule']);
    expect(schedule?.restart).toBe('no');
    expect(schedule?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
    expect(schedule?.depends_on?.redis?.condition).toBe('service_healthy');
    expect(schedule?.environment).toEqual(migrate?.environment);
    expect(schedule?.ports).toBeUndefined();
  });

  it('checks the worker on /health with a command the image has, which fails on a 503', async () => {
    const test = worker?.healthcheck?.test ?? [];
    expect(test.join(' ')).toContain('http://127.0.0.1:9464/health');
    expect(worker?.healthcheck?.interval).toMatch(/^\d+s$/);
    let ok = true;
    const server = await startMetricsServer(new Registry(), async () => ({ ok }), 0);
    try {
      expect(await runHealthcheck(server.port)).toBe(0);
      ok = false;
      expect(await runHealthcheck(server.port)).toBe(1);
    } finally {
      await server.close();
    }
    expect(await runHealthcheck(server.port)).toBe(1); // nothing listening: unhealthy, not hung
  });

  it('passes only contract variables, and a valid config for the database parts', () => {
    for (const service of [migrate, schedule, worker]) {
      const env = service?.environment ?? {};
      for (const name of Object.keys(env)) expect(ENV_VARS).toContain(name);
      expect(env.DATABASE_URL).toBe('postgres://adops:adops@postgres:5432/adops');
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      // Compose leaves ${VAR:-} empty when unset; empty counts as unset in our config.
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
      );
      expect(() => loadConfig(resolved)).not.toThrow();
    }
  });

  it('lets the worker scale on one host: no fixed host port, metrics open on the compose network', () => {
    // A published host port would make the second replica of `--scale worker=2` fail to start.
    const published = (worker?.ports ?? []).filter((p) =>
      typeof p === 'object' ? p.published !== undefined : /:/.test(String(p)),
    );
    expect(published).toEqual([]);
    // A fixed container name or replica count would also stop `--scale worker=N`.
    expect(worker?.container_name).toBeUndefined();
    expect(worker?.deploy?.replicas).toBeUndefined();
    expect(worker?.expose?.map(String)).toContain('9464');
    expect(worker?.environment?.ADOPS_METRICS_HOST).toBe('0.0.0.0');
    // The one-shot migrate serves no metrics and keeps the default loopback binding.
    expect(migrate?.environment?.ADOPS_METRICS_HOST).toBeUndefined();
  });

  it('gives the worker the same API and database settings as migrate', () => {
    const { ADOPS_METRICS_HOST: _host, ...workerRest } = worker?.environment ?? {};
    expect(workerRest).toEqual(migrate?.environment);
  });
});

describe('docker-compose.postgres.yml', () => {
  const alone = parse(readFileSync('docker-compose.postgres.yml', 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
  };

  it('is docker-compose.yml without redis: the same services, each adops one on the Postgres queue', () => {
    const { redis: _redis, ...rest } = compose.services;
    expect(Object.keys(alone.services).sort()).toEqual(Object.keys(rest).sort());
    for (const name of ['migrate', 'schedule', 'worker']) {
      const service = alone.services[name];
      const withRedis = compose.services[name];
      const { REDIS_URL: _url, ...env } = withRedis?.environment ?? {};
      expect(service?.environment, name).toEqual({ ...env, ADOPS_QUEUE: 'postgres' });
      expect(Object.keys(service?.depends_on ?? {}), name).not.toContain('redis');
      expect(service?.command, name).toEqual(withRedis?.command);
      expect(service?.healthcheck, name).toEqual(withRedis?.healthcheck);
      expect(loadConfig({ ADOPS_QUEUE: service?.environment?.ADOPS_QUEUE ?? '' }).queue.backend).toBe(
        'postgres',
      );
    }
    expect(alone.services.postgres).toEqual(compose.services.postgres);
  });
});
