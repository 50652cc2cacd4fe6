// Bad config and identifiers: report names, dimensions, schema and prefix crafted as SQL, as paths
// or as huge strings are rejected at validation, before any SQL runs or any table changes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadConfig } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';
import { parseJob } from '../../../src/platform/config/jobs.js';
import { ident, qualified, reportTable } from '../../../src/platform/pg/handle.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { figureBook } from '../../helpers/reliability/figures.js';

const book = figureBook('validation');
let db: TestDatabase;
let dir: string;
/** Crafted values rejected by validation (job files and env), for the figures. */
const rejected = { names: 0, dimensions: 0, env: 0 };

const SQL = `x; DROP TABLE ${TEST_SCHEMA}.report_loads; --`;
const HUGE = 'a'.repeat(100_000);
const BAD_NAMES = [
  SQL,
  `x'); DELETE FROM report_loads; --`,
  'report_"quoted"',
  '../../etc/passwd',
  'a/b',
  'name\nwith_newline',
  'Upper',
  '1starts_with_digit',
  HUGE,
  '',
];
const BAD_DIMENSIONS = [
  SQL,
  'day"; DROP TABLE x; --',
  '../../etc/passwd',
  'campaign_id ',
  HUGE,
  'DAY',
  'clicks',
  '',
];
const yaml = (name: string, dims: string[]) =>
  `name: ${JSON.stringify(name)}\ndimensions: ${JSON.stringify(dims)}\nperiod: day\n`;

/** The schema's tables with their row counts: must not change when validation rejects input. */
async function tables(): Promise<string> {
  const { rows } = await db.pool.query<{ t: string }>(
    `SELECT string_agg(table_name, ',' ORDER BY table_name) AS t FROM information_schema.tables WHERE table_schema = $1`,
    [TEST_SCHEMA],
  );
  return rows[0]?.t ?? '';
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'adops-rel-'));
});
afterAll(async () => {
  book.add({
    id: 'config/crafted-values',
    title: 'crafted names, dimensions and env values',
    injected: `${BAD_NAMES.length} report names, ${BAD_DIMENSIONS.length} dimensions (SQL, paths, 100,000 chars, ...), 10 env values`,
    periodsExact: 0,
    periodsTotal: 0,
    duplicates: 0,
    retries: 0,
    failedAsExpected: rejected.names + rejected.dimensions + rejected.env,
    notes: `rejected at validation with a one-line ConfigError: ${rejected.names} names, ${rejected.dimensions} dimensions, ${rejected.env} env values`,
    ms: 0,
  });
  book.flush(inject('runId'));
  rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('job definitions crafted to attack SQL or paths are rejected at validation', () => {
  it.each(
    BAD_NAMES.map((n) => [n.length > 40 ? `${n.slice(0, 20)}... (${n.length} chars)` : JSON.stringify(n), n]),
  )('report name %s', (_label, name) => {
    const error = (() => {
      try {
        parseJob(yaml(name as string, ['day']), 'jobs/evil.yaml');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).subject).toBe('jobs/evil.yaml: name');
    // The message stays one readable line, whatever was sent.
    expect((error as Error).message.length).toBeLessThan(400);
    expect((error as Error).message).not.toContain('\n');
    rejected.names++;
  });

  it.each(
    BAD_DIMENSIONS.map((d) => [
      d.length > 40 ? `${d.slice(0, 20)}... (${d.length} chars)` : JSON.stringify(d),
      d,
    ]),
  )('dimension %s', (_label, dim) => {
    expect(() => parseJob(yaml('ok_report', ['day', dim as string]), 'jobs/evil.yaml')).toThrow(
      expect.objectContaining({ name: 'ConfigError', subject: 'jobs/evil.yaml: dimensions[1]' }),
    );
    rejected.dimensions++;
  });

  it('SQL identifiers are refused by ident(), qualified() and reportTable() even if validation were bypassed', () => {
    for (const bad of [SQL, '../x', HUGE, 'a"b', 'A']) {
      expect(() => ident(bad)).toThrow(/refusing unsafe SQL identifier/);
      expect(() => qualified(TEST_SCHEMA, bad)).toThrow(/refusing unsafe/);
      expect(() => reportTable(bad)).toThrow(/refusing unsafe report name/);
    }
  });
});

describe('environment values crafted as SQL, paths or huge strings are rejected', () => {
  const base = { ADOPS_API_KEY: 'k-1234', ADOPS_BASE_URL: 'http://127.0.0.1:1/v2' };
  it.each([
    ['ADOPS_SCHEMA', `adops; DROP SCHEMA public CASCADE`],
    ['ADOPS_SCHEMA', '../../tmp'],
    ['ADOPS_SCHEMA', 'a'.repeat(1000)],
    ['ADOPS_QUEUE_PREFIX', 'adops * FLUSHALL'],
    ['ADOPS_QUEUE_PREFIX', 'p'.repeat(1000)],
    ['ADOPS_BASE_URL', 'file:///etc/passwd'],
    ['ADOPS_BASE_URL', `http://example.com/v2/../../admin`],
    ['DATABASE_URL', "'; DROP DATABASE x; --"],
    ['LOG_LEVEL', 'debug; rm -rf /'],
    ['ADOPS_PULL_ATTEMPTS', '1e9'],
  ])('%s=%s', (name, value) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(
      expect.objectContaining({ name: 'ConfigError', subject: name }),
    );
    rejected.env++;
  });
});

describe('adops migrate with a malicious job file', () => {
  it.each([
    ['report name as SQL', yaml(SQL, ['day'])],
    ['dimension as SQL', yaml('evil', ['day', 'campaign_id) ; DROP TABLE report_loads; --'])],
    ['report name as a path', yaml('../../../tmp/pwned', ['day'])],
    ['huge report name', yaml(HUGE, ['day'])],
  ])('%s: exits 2 naming the file and field, and changes no table', async (kind, text) => {
    const started = Date.now();
    const jobs = mkdtempSync(join(dir, 'jobs-'));
    writeFileSync(join(jobs, 'evil.yaml'), text);
    const before = await tables();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await main(
      ['node', 'adops', 'migrate'],
      { DATABASE_URL: db.url, ADOPS_SCHEMA: TEST_SCHEMA, ADOPS_JOBS_DIR: jobs, LOG_LEVEL: 'silent' },
      stdout,
      stderr,
    );
    const after = await tables();
    book.add({
      id: `config/${kind.replace(/\W+/g, '-')}`,
      title: `bad job file: ${kind}`,
      injected: `jobs/evil.yaml with ${kind}, then adops migrate`,
      periodsExact: 0,
      periodsTotal: 0,
      duplicates: 0,
      retries: 0,
      failedAsExpected: code === 2 && before === after ? 1 : 0,
      notes: `exit ${code}: ${err.trim().slice(0, 120)}`,
      ms: Date.now() - started,
    });
    expect(code).toBe(2);
    // A name of 100,000 characters makes the file itself too big: refused by its size, unread.
    expect(err).toMatch(/evil\.yaml: (name|dimensions\[1\]|\d+ bytes is over the limit)/);
    expect(err.length).toBeLessThan(600);
    expect(after).toBe(before);
    expect(after).toContain('report_loads');
  });
});
