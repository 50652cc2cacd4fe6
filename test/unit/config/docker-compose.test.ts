import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REDIS_HA_VARS } from '../../../src/platform/config/connections.js';
import { ENV_SCHEMA, loadConfig } from '../../../src/platform/config/env.js';
import { startMetricsServer } from '../../../src/worker/health-server.js';

/** Every env var the configuration reads. */
const ENV_VARS: readonly string[] = [
  ...Object.keys(ENV_SCHEMA),
  ...REDIS_HA_VARS,
  'ADOPS_API_KEY',
  'ADOPS_API_KEY_FILE',
  'ADOPS_WEBHOOK_SECRET',
  'ADOPS_ACCOUNTS_FILE',
];

/** Every ADOPS_*, DATABASE_URL, REDIS_URL and LOG_LEVEL variable src/platform/config/env.ts names: a variable added
 * there fails these tests until both compose files carry it. */
const READ_BY_ENV_TS: readonly string[] = [
  ...new Set(
    readFileSync(join('src', 'platform', 'config', 'env.ts'), 'utf8').match(
      /\b(ADOPS_[A-Z0-9_]+|DATABASE_URL|REDIS_URL|LOG_LEVEL)\b/g,
    ) ?? [],
  ),
];

/** What compose sets itself in an adops container, whatever .env says: the addresses and paths of its own
 * services, the queue backend the file is built around, and the worker's metrics address that the
 * healthcheck and Prometheus use. Everything else comes from .env or the shell. */
function pinnedIn(file: string, service: string): readonly string[] {
  // Without Redis, REDIS_URL is neither pinned nor needed: ADOPS_QUEUE=postgres never connects to Redis.
  const own = file === 'docker-compose.yml' ? ['DATABASE_URL', 'REDIS_URL'] : ['DATABASE_URL'];
  const metrics = service === 'worker' ? ['ADOPS_METRICS_HOST', 'ADOPS_METRICS_PORT'] : [];
  return [...own, 'ADOPS_JOBS_DIR', 'ADOPS_QUEUE', ...metrics];
}

/** Where compose mounts the host folder ./secrets (key files, an accounts file) in every adops container. */
const SECRETS_MOUNT = './secrets:/run/secrets/adops:ro';

type EnvFile = string | { path: string; required?: boolean };

/** Compose's interpolation of `${NAME}`, `${NAME:-default}` and `${NAME:?message}` from `vars`. */
function interpolate(value: string, vars: Readonly<Record<string, string>>): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g,
    (_all, name: string, op?: string, arg?: string) => {
      const set = vars[name];
      if (set !== undefined && set !== '') return set;
      if (op === '?') throw new Error(`required variable ${name} is missing a value: ${arg ?? ''}`);
      return op === '-' ? (arg ?? '') : '';
    },
  );
}

/** The environment a container of `service` starts with, as compose builds it: the env_file files (here only
 * .env, whose contents are `dotenv`), then `environment` on top, interpolated from the shell over .env. */
function containerEnv(
  service: Service,
  dotenv: Readonly<Record<string, string>>,
  shell: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const files = service.env_file === undefined ? [] : [service.env_file].flat();
  const env: Record<string, string> = {};
  for (const file of files) {
    const path = typeof file === 'string' ? file : file.path;
    expect(path, 'the only env_file is .env').toBe('.env');
    Object.assign(env, dotenv);
  }
  for (const [name, value] of Object.entries(service.environment ?? {}))
    env[name] = interpolate(String(value), { ...dotenv, ...shell });
  return env;
}

/** A value loadConfig accepts for `name`, different from its default. */
function sample(name: string): string {
  const known: Record<string, string> = {
    ADOPS_BASE_URL: 'https://acme.api.example.com/v2',
    ADOPS_AUTH: 'x-api-key',
    ADOPS_REPORT_PARAMS: 'brackets',
    ADOPS_HTTP_COMPRESSION: 'identity',
    ADOPS_QUEUE: 'postgres',
    ADOPS_METRICS_HOST: '10.0.0.1',
    ADOPS_COPY_FORMAT: 'text',
    ADOPS_SCHEMA: 'ads',
    LOG_LEVEL: 'debug',
    ADOPS_QUEUE_PREFIX: 'acme',
    ADOPS_WEBHOOK_URL: 'https://hooks.example.com/adops',
    ADOPS_API_KEY_FILE: '/run/secrets/adops/api_key',
    ADOPS_ACCOUNTS_FILE: '/run/secrets/adops/accounts.yaml',
    DATABASE_URL: 'postgres://u@db.example.com/x',
    REDIS_URL: 'redis://cache.example.com:6379',
    ADOPS_JOBS_DIR: '/elsewhere',
  };
  return known[name] ?? (name.endsWith('_SECRET') || name.endsWith('_KEY') ? `secret-of-${name}` : '7');
}

interface Service {
  env_file?: EnvFile | EnvFile[];
  volumes?: string[];
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  restart?: string;
  environment?: Record<string, string>;
  ports?: (string | number | { published?: string | number; host_ip?: string })[];
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
      expect(() => loadConfig(containerEnv(service ?? {}, {}))).not.toThrow();
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
    expect(worker?.environment?.ADOPS_METRICS_PORT).toBe('9464');
    // The one-shot migrate serves no metrics and keeps the default loopback binding.
    expect(loadConfig(containerEnv(migrate ?? {}, {})).metricsHost).toBe('127.0.0.1');
  });

  it('gives the worker the same API and database settings as migrate', () => {
    const { ADOPS_METRICS_HOST: _host, ADOPS_METRICS_PORT: _port, ...workerRest } = worker?.environment ?? {};
    const { ADOPS_METRICS_HOST: _h, ADOPS_METRICS_PORT: _p, ...migrateRest } = migrate?.environment ?? {};
    expect(workerRest).toEqual(migrateRest);
    expect(worker?.env_file).toEqual(migrate?.env_file);
    expect(worker?.volumes).toEqual(migrate?.volumes);
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

describe.each(['docker-compose.yml', 'docker-compose.postgres.yml'])('%s carries every setting', (file) => {
  const services = parse(readFileSync(file, 'utf8'), { merge: true }).services as Record<string, Service>;
  const adops = Object.entries(services).filter(([, s]) => s.build === '.');

  it('runs adops in migrate, schedule and worker', () => {
    expect(adops.map(([name]) => name).sort()).toEqual(['migrate', 'schedule', 'worker']);
    expect(READ_BY_ENV_TS).toEqual(
      expect.arrayContaining(['ADOPS_REPORT_PARAMS', 'ADOPS_WEBHOOK_URL', 'LOG_LEVEL']),
    );
  });

  it.each(['.env', 'the shell'])(
    'gives every adops container each variable env.ts reads, set in %s, except the few compose pins',
    (where) => {
      for (const [name, service] of adops) {
        const pinned = pinnedIn(file, name);
        const unused = file === 'docker-compose.yml' ? [] : ['REDIS_URL'];
        for (const variable of READ_BY_ENV_TS.filter((v) => !pinned.includes(v) && !unused.includes(v))) {
          const given = { [variable]: sample(variable) };
          const env = where === '.env' ? containerEnv(service, given) : containerEnv(service, {}, given);
          expect(env[variable], `${name} gets ${variable} from ${where}`).toBe(sample(variable));
        }
        // Pinned ones keep compose's value: they name its own services, mounts and ports.
        for (const variable of pinned) {
          const env = containerEnv(service, { [variable]: sample(variable) });
          expect(env[variable], `${name} pins ${variable}`).toBe(service.environment?.[variable]);
        }
      }
    },
  );

  it('reads .env as an env_file, optional, so an accounts file can name any variable in api_key_env', () => {
    for (const [name, service] of adops) {
      expect([service.env_file].flat(), name).toEqual([{ path: '.env', required: false }]);
      expect(containerEnv(service, { ACME_API_KEY: 'k' }).ACME_API_KEY, name).toBe('k');
    }
  });

  it('mounts ./secrets read-only where a key file and an accounts file are read from', () => {
    for (const [name, service] of adops) expect(service.volumes, name).toContain(SECRETS_MOUNT);
    // Keys never reach git or the image's build context.
    expect(readFileSync('.gitignore', 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['secrets/', '.env']),
    );
    expect(readFileSync('.dockerignore', 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['secrets', '.env']),
    );
  });

  it('publishes every port on 127.0.0.1 unless ADOPS_BIND opens it', () => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p) => [name, String(p)] as const),
    );
    expect(published.length).toBeGreaterThan(0);
    for (const [name, port] of published) {
      expect(port, name).toMatch(/^\$\{ADOPS_BIND:-127\.0\.0\.1\}:\d+:\d+$/);
      expect(interpolate(port, {}), name).toMatch(/^127\.0\.0\.1:/);
      expect(interpolate(port, { ADOPS_BIND: '0.0.0.0' }), name).toMatch(/^0\.0\.0\.0:/);
    }
  });

  it("sets Grafana's admin password from GRAFANA_ADMIN_PASSWORD; Grafana alone refuses to start without one", () => {
    const grafana = services.grafana?.environment ?? {};
    const password = grafana.GF_SECURITY_ADMIN_PASSWORD ?? '';
    expect(interpolate(password, { GRAFANA_ADMIN_PASSWORD: 's3cret' })).toBe('s3cret');
    // Unset, the other services still start (`docker compose up -d postgres` needs no Grafana password)...
    expect(interpolate(password, {})).toBe('');
    // ...and Grafana's own entrypoint stops before /run.sh, naming the variable.
    const entrypoint = (services.grafana?.entrypoint ?? []).join(' ');
    expect(entrypoint).toMatch(
      /\[ -n "\$\$GF_SECURITY_ADMIN_PASSWORD" \] \|\| \{ echo "set GRAFANA_ADMIN_PASSWORD[^}]*exit 1; \}; exec \/run\.sh$/,
    );
    expect(
      Object.values(grafana).map((v) => interpolate(String(v), { GRAFANA_ADMIN_PASSWORD: 'x' })),
    ).not.toContain('admin');
  });
});
