import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { spawnCli } from '../../helpers/cli.js';
import { runCli, runCliProcess } from '../../helpers/run-cli.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await db.drop();
});

function jobsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'adops-jobs-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('adops command line', () => {
  it('a bad env var gives one line naming it and what is allowed, exit 2', async () => {
    const run = await runCli(['migrate'], { ADOPS_AUTH: 'basic' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('adops: ADOPS_AUTH="basic" is invalid: expected one of: bearer, x-api-key\n');
    expect(run.stdout).toBe('');
  });

  it.each<[string, string[], Record<string, string>]>([
    ['REDIS_URL', ['heal'], { REDIS_URL: 'redis://127.0.0.1:6379/abc' }],
    ['DATABASE_URL', ['migrate'], { DATABASE_URL: 'postgres://root@127.0.0.1:99999/adops' }],
    ['DATABASE_URL', ['status'], { DATABASE_URL: 'postgres://root@127.0.0.1:5432/adops?sslmode=bogus' }],
    // Postgres' own schemas: pg_temp is each session's temporary schema, the others are the catalog.
    ['ADOPS_SCHEMA', ['migrate'], { ADOPS_SCHEMA: 'pg_temp' }],
    ['ADOPS_SCHEMA', ['migrate'], { ADOPS_SCHEMA: 'pg_catalog' }],
    ['ADOPS_SCHEMA', ['status'], { ADOPS_SCHEMA: 'information_schema' }],
  ])(
    'a malformed %s is one line naming it, exit 2, no stack trace (`adops %s`, a real process)',
    async (name, args, env) => {
      const run = await runCliProcess(args, {
        ...env,
        DATABASE_URL: env.DATABASE_URL ?? db.url,
        ADOPS_QUEUE_PREFIX: `cli-url-${process.pid}`,
      });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(new RegExp(`^adops: ${name}=".*" is invalid: expected .+\\n$`));
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.stdout).toBe('');
    },
  );

  it('connects to Postgres as the OS user, as psql does, when neither the URL, PGUSER nor USER names one', async () => {
    // spawnCli passes PATH and HOME only: no USER, no PGUSER. The URL names no user either.
    const url = new URL(db.url);
    url.username = '';
    url.password = '';
    const run = await runCliProcess(['migrate'], {
      DATABASE_URL: url.toString(),
      ADOPS_SCHEMA: 'os_user',
      ADOPS_JOBS_DIR: jobsDir({}),
    });
    expect(run.code, run.stderr).toBe(0);
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM os_user.schema_migrations',
    );
    expect(rows[0]?.n).toBeGreaterThan(0);
  });

  it('a bad job file gives one line naming file, field and allowed values, exit 2', async () => {
    const dir = jobsDir({ 'bad.yaml': 'name: bad\ndimensions: [day, placement]\nperiod: day\n' });
    const run = await runCli(['migrate'], { ADOPS_JOBS_DIR: dir, DATABASE_URL: db.url });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(
      /bad.yaml: dimensions\[1\]: "placement" is not a dimension; allowed: year, month, day/,
    );
  });

  it("a flag naming one of Postgres' own schemas is bad usage, exit 2", async () => {
    const run = await runCli(['demo', '--schema', 'pg_toast'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--schema.*pg_\* and information_schema are Postgres' own schemas/);
  });

  it('an unknown command or flag is bad usage, exit 2', async () => {
    expect((await runCli(['frobnicate'], {})).code).toBe(2);
    const run = await runCli(['demo', '--days', 'many'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--days.*expected a whole number from 1 to 90/);
  });

  it('--help lists every command of the contract', async () => {
    const run = await runCli(['--help'], {});
    expect(run.code).toBe(0);
    for (const command of [
      'migrate',
      'worker',
      'schedule',
      'backfill',
      'heal',
      'pull',
      'sync',
      'status',
      'doctor',
      'emulator',
      'demo',
    ]) {
      expect(run.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });

  it('an unknown ADOPS_* variable is one warning line on stderr naming the closest known one; the command runs', async () => {
    const run = await runCli(['migrate'], {
      DATABASE_URL: db.url,
      ADOPS_SCHEMA: 'unknown_vars',
      ADOPS_SHEMA: 'typo',
      LOG_LEVEL: 'warn',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(
      'adops: warning: ADOPS_SHEMA is not a variable adops reads (ignored); did you mean ADOPS_SCHEMA?\n',
    );
  });

  it('--version prints the package version, exit 0', async () => {
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8'),
    ) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const run = await runCli([flag], {});
      expect([run.code, run.stdout, run.stderr]).toEqual([0, `${version}\n`, '']);
    }
  });

  it.each([['schedule'], ['backfill'], ['heal'], ['dashboard']])(
    '`adops %s --help` names ADOPS_QUEUE and DATABASE_URL, where the queues may live, not only REDIS_URL',
    async (command) => {
      const run = await runCli([command, '--help'], {});
      expect(run.code).toBe(0);
      const help = run.stdout.replace(/\s+/g, ' ');
      expect(help).toMatch(/ADOPS_QUEUE\b/);
      expect(help).toContain('DATABASE_URL');
    },
  );

  it('two `adops migrate` at once both exit 0 and apply each migration once', async () => {
    const env = { DATABASE_URL: db.url, ADOPS_SCHEMA: 'twice', LOG_LEVEL: 'warn' };
    const [a, b] = await Promise.all([runCliProcess(['migrate'], env), runCliProcess(['migrate'], env)]);
    expect([a?.code, b?.code], `${a?.stderr}\n${b?.stderr}`).toEqual([0, 0]);
    const { rows } = await db.pool.query<{ version: number; n: number }>(
      'SELECT version, count(*)::int AS n FROM twice.schema_migrations GROUP BY version ORDER BY version',
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const applied = `${a?.stdout}${b?.stdout}`.match(/^applied /gm) ?? [];
    expect(applied).toHaveLength(rows.length);
    const { rows: tables } = await db.pool.query(
      // Monthly partitions are tables too: left out.
      "SELECT count(*)::int AS n FROM pg_tables t JOIN pg_class c ON c.oid = (quote_ident(t.schemaname) || '.' || quote_ident(t.tablename))::regclass " +
        "WHERE schemaname = 'twice' AND tablename LIKE 'report\\_%' AND NOT c.relispartition AND tablename NOT IN ('report_totals', 'report_loads', 'report_raw', 'report_raw_parts', 'report_versions')",
    );
    expect(tables[0].n).toBe(5); // one per shipped job definition
  });

  it('ends quietly, exit 0, when the reader of its output goes away (adops --help | head -1)', async () => {
    const cli = spawnCli(['--help'], {});
    cli.child.stdout?.destroy(); // the reader is gone before the first write: EPIPE
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).not.toMatch(/EPIPE|Error/);
  });
});
