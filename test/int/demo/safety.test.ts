// `adops demo` with a production environment set never writes where production lives: its own
// schema and queue prefix, whatever ADOPS_SCHEMA and ADOPS_QUEUE_PREFIX say.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClientFromConfig } from '../../../src/api/client.js';
import { runEntitySync } from '../../../src/catalogue/sync.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { runCli, runCliProcess } from '../../helpers/run-cli.js';
import { createHarness, quietLogger, type Harness } from '../../helpers/pipeline.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

/** A production warehouse and queue: a loaded report period, the catalogue, a pull still waiting. */
async function fillProduction(): Promise<void> {
  const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
  const worker = await h.worker();
  const loaded = await enqueueBackfill(h.queues.pulls, zone, '2026-01-01', '2026-01-01');
  expect((await waitForPulls(h.queues.pulls, loaded.pulls)).failed).toEqual([]);
  const api = createApiClientFromConfig(h.config, quietLogger);
  try {
    await runEntitySync({ wh: warehouseOf(h.db.pool, TEST_SCHEMA), api, logger: quietLogger });
  } finally {
    await api.close();
  }
  await worker.close(5_000);
  await enqueueBackfill(h.queues.pulls, zone, '2026-01-02', '2026-01-02');
  const { rows } = await h.db.pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM adops.campaigns WHERE deleted_at IS NULL)::int
          + (SELECT count(*) FROM adops.report_daily_zone)::int AS n`,
  );
  expect(rows[0]?.n).toBeGreaterThan(0);
}

/** pg_dump of the production schema, data included; a fixed \\restrict key keeps two dumps comparable. */
async function dumpProductionSchema(): Promise<string> {
  const args = ['--schema', TEST_SCHEMA, '--restrict-key', 'adopsdump', '--dbname', h.db.url];
  const { stdout } = await promisify(execFile)('pg_dump', args, {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/**
 * The keys under the production prefix: every name, and the serialized value of each persistent
 * one (keys with a time to live, like the rate limiter's windows, expire by themselves).
 */
async function productionKeys(): Promise<{ names: string[]; persistent: Record<string, string> }> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const names: string[] = [];
  const persistent: Record<string, string> = {};
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${h.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        names.push(key);
        if ((await redis.pttl(key)) === -1)
          persistent[key] = (await redis.dumpBuffer(key))?.toString('hex') ?? 'gone';
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { names, persistent };
}

describe('adops demo beside production', () => {
  it('leaves a filled production schema byte-identical and production queue keys untouched', async () => {
    await fillProduction();
    const dumpBefore = await dumpProductionSchema();
    const keysBefore = await productionKeys();
    expect(Object.keys(keysBefore.persistent).length).toBeGreaterThan(0);

    // The production env as is (ADOPS_SCHEMA=adops, ADOPS_QUEUE_PREFIX=<production's>); only the
    // demo's own prefix is set apart from other test runs.
    const args = ['demo', '--days', '1', '--cells-per-day', '50', '--queue-prefix', `${h.prefix}-demo`];
    const run = await runCliProcess(args, h.env);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('schema adops_demo');

    expect(await dumpProductionSchema()).toBe(dumpBefore);
    const keysAfter = await productionKeys();
    expect(keysAfter.persistent).toEqual(keysBefore.persistent);
    expect(keysAfter.names.filter((k) => !keysBefore.names.includes(k))).toEqual([]);
    const { rows } = await h.db.pool.query<{ n: number; comment: string }>(
      `SELECT (SELECT count(*)::int FROM adops_demo.report_daily_zone) AS n,
              obj_description('adops_demo'::regnamespace, 'pg_namespace') AS comment`,
    );
    expect(rows[0]?.n).toBeGreaterThan(0);
    expect(rows[0]?.comment).toMatch(/adops demo/);
  });

  it("refuses, exit 2, a schema holding tables it did not create and production's queue prefix", async () => {
    await fillProduction();
    const dumpBefore = await dumpProductionSchema();
    const quick = ['demo', '--days', '1', '--cells-per-day', '50'];

    const schema = await runCli(
      [...quick, '--schema', TEST_SCHEMA, '--queue-prefix', `${h.prefix}-demo`],
      h.env,
    );
    expect(schema.code).toBe(2);
    expect(schema.stderr).toMatch(/^adops: schema adops holds \d+ tables .* that adops demo did not create/m);
    expect(schema.stderr).toContain('--schema');

    const prefix = await runCli([...quick, '--schema', 'adops_demo', '--queue-prefix', h.prefix], h.env);
    expect(prefix.code).toBe(2);
    expect(prefix.stderr).toMatch(/queue prefix .* is ADOPS_QUEUE_PREFIX/);

    // 55 characters: a valid schema name, but its queue schema (+ "_queue_" and 12 hex) is 74 bytes.
    const long = await runCli(
      [...quick, '--schema', `d${'x'.repeat(54)}`, '--queue-prefix', 'demo-long'],
      h.env,
    );
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/--schema dx+ is too long for its Postgres queue: .* 63-byte limit/);

    expect(await dumpProductionSchema()).toBe(dumpBefore);
    const { rows } = await h.db.pool.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'adops_demo'`);
    expect(rows).toEqual([]);
  });
});
