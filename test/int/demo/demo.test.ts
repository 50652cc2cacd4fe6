import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import { runDemo } from '../../../src/cli/demo.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { runCliProcess } from '../../helpers/run-cli.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await db.drop();
});

async function demoOnce(
  prefix: string,
  progress?: PassThrough,
): Promise<{ output: string; result: Awaited<ReturnType<typeof runDemo>> }> {
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
  });
  let output = '';
  const result = await runDemo({
    config,
    schema: 'demo',
    queuePrefix: prefix,
    logger: createLogger({ level: 'warn', secrets: [], destination: new PassThrough() }),
    out: (text) => {
      output += text;
    },
    days: 2,
    cellsPerDay: 300,
    ...(progress === undefined ? {} : { progress }),
  });
  return { output, result };
}

async function rowCounts(): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ name: string; n: number }>(
    `SELECT 'campaigns' AS name, count(*)::int AS n FROM demo.campaigns
     UNION ALL SELECT 'daily_campaign', count(*)::int FROM demo.report_daily_campaign
     UNION ALL SELECT 'daily_geo_device', count(*)::int FROM demo.report_daily_geo_device
     UNION ALL SELECT 'hourly', count(*)::int FROM demo.bi_hourly WHERE NOT provisional
     UNION ALL SELECT 'hourly_today', count(*)::int FROM demo.bi_hourly WHERE provisional`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

describe('adops demo', () => {
  it('migrates, syncs, backfills every default report and answers the example queries; a second run changes no counts', async () => {
    const prefix = testPrefix();
    const bar = new PassThrough();
    let drawn = '';
    bar.on('data', (chunk: Buffer) => (drawn += chunk.toString()));
    const first = await demoOnce(prefix, bar);
    // The bar's ETA is the demo's own: `?` before the first pull ends, never cli-progress' `INF` or `0s`.
    expect(drawn).toMatch(/^pulls \[.*\] 0\/10 \| failed 0 \| 0\.0\/s \| ETA \?$/m);
    expect(drawn).not.toMatch(/INF|NaN/);
    // Two accounts x 5 reports, both days in one pull (days_per_request).
    expect(first.result).toMatchObject({ pulls: 10, failed: 0 });
    expect(first.result.campaigns).toBeGreaterThan(0);
    expect(first.output).toContain('backfill: 10 loaded, 0 failed');
    // Then today, provisionally: two accounts x 5 reports, shown apart by status.
    expect(first.output).toContain('today, provisional: 10 loaded, 0 failed');
    expect(first.output).toContain('Today, provisional (each pull replaces the last');
    expect(first.output).toContain('sync of account north:');
    expect(first.output).toContain('sync of account south:');
    // adops status groups by account.
    expect(first.output).toMatch(/account north:[\s\S]*account south:/);
    for (const title of [
      'Top campaigns by impressions',
      'Daily fill rate',
      'Viewability by device',
      'Campaigns behind their goal',
    ]) {
      expect(first.output).toContain(title);
    }
    expect(first.output).toMatch(/│ (desktop|mobile|tablet) /);
    const counts = await rowCounts();
    for (const n of Object.values(counts)) expect(n).toBeGreaterThan(0);
    expect(counts.hourly).toBe(96);
    const { rows: accounts } = await db.pool.query<{ account: string }>(
      'SELECT DISTINCT account FROM demo.report_hourly ORDER BY 1',
    );
    expect(accounts.map((a) => a.account)).toEqual(['north', 'south']);

    const second = await demoOnce(prefix);
    expect(second.result.failed).toBe(0);
    expect(await rowCounts()).toEqual(counts);
  });

  it('prints no warning on stderr on a fresh database (the Postgres queue): no DeprecationWarning of pg', async () => {
    // A database of its own, empty: the first run, as a newcomer's, migrates BullMQ's queue schema too.
    const fresh = await createTestDatabase({ empty: true });
    try {
      const run = await runCliProcess(
        ['demo', '--days', '2', '--cells-per-day', '50', '--queue-prefix', testPrefix()],
        {
          DATABASE_URL: fresh.url,
        },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/Warning|\(node:\d+\)/);
    } finally {
      await fresh.drop();
    }
  });
});
