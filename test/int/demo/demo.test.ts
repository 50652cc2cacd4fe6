import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { runDemo } from '../../../src/demo/run.js';
import { createLogger } from '../../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await db.drop();
});

async function demoOnce(
  prefix: string,
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
  });
  return { output, result };
}

async function rowCounts(): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ name: string; n: number }>(
    `SELECT 'campaigns' AS name, count(*)::int AS n FROM demo.campaigns
     UNION ALL SELECT 'daily_campaign', count(*)::int FROM demo.report_daily_campaign
     UNION ALL SELECT 'daily_geo_device', count(*)::int FROM demo.report_daily_geo_device
     UNION ALL SELECT 'hourly', count(*)::int FROM demo.report_hourly`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

describe('adops demo', () => {
  it('migrates, syncs, backfills every default report and answers the example queries; a second run changes no counts', async () => {
    const prefix = testPrefix();
    const first = await demoOnce(prefix);
    expect(first.result).toMatchObject({ pulls: 10, failed: 0 });
    expect(first.result.campaigns).toBeGreaterThan(0);
    expect(first.output).toContain('backfill: 10 loaded, 0 failed');
    for (const title of ['Top campaigns by impressions', 'Daily fill rate', 'Viewability by device']) {
      expect(first.output).toContain(title);
    }
    expect(first.output).toMatch(/│ (desktop|mobile|tablet) /);
    const counts = await rowCounts();
    for (const n of Object.values(counts)) expect(n).toBeGreaterThan(0);
    expect(counts.hourly).toBe(48);

    const second = await demoOnce(prefix);
    expect(second.result.failed).toBe(0);
    expect(await rowCounts()).toEqual(counts);
  });
});
