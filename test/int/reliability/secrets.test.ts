// The API key under pressure: an API that echoes the key in its error bodies, every log at trace
// level, failed jobs kept in Redis. Afterwards the key must be in no log line, no Redis key or
// value and no database dump; the echoes must have reached the error paths, redacted.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { qualified } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { startPipeline } from '../../helpers/pipeline.js';
import { EACH_PERIOD, FROM, openSuite, TO, type Suite } from '../../helpers/reliability/suite.js';
import { verify } from '../../helpers/reliability/truth.js';

let suite: Suite;
const book = figureBook('secrets');

beforeAll(async () => {
  suite = await openSuite();
});
afterAll(async () => {
  book.flush(inject('runId'));
  await suite?.close();
});

describe('the API key never leaves the process', () => {
  it('is redacted from echoed error bodies and found nowhere after a faulty backfill', async () => {
    const started = Date.now();
    const { db, env } = await suite.newCase();
    const echo = (status: number) => ({
      path: '/v2/reports',
      status,
      body: JSON.stringify({
        error: 'echo',
        message: `request with key ${suite.key} (Bearer ${suite.key}) refused`,
      }),
      headers: { 'content-type': 'application/json' },
    });
    const p = await startPipeline({ env: { ...env, LOG_LEVEL: 'trace' }, pool: db.pool, jobs: suite.jobs });
    let failed = 0;
    try {
      suite.emulator.setFaults({ failRate: 0.2, dropRate: 0.1, seed: 21 });
      suite.emulator.override({ ...echo(500), times: 2 });
      suite.emulator.override({ ...echo(400), times: 1 });
      const { pulls } = await enqueueBackfill(
        p.queues.pulls,
        suite.reports,
        FROM,
        TO,
        'newest-first',
        EACH_PERIOD,
      );
      const result = await waitForPulls(p.queues.pulls, pulls, { pollMs: 50 });
      failed = result.failed.length;
      // The 400 echo fails one pull for good; the 500 echoes are retried away.
      expect(result.failed).toHaveLength(1);
      expect(result.failed[0]?.reason).toContain('[REDACTED]');
    } finally {
      suite.emulator.setFaults({});
      await p.close();
      suite.logLines.push(...p.lines);
    }
    const { rows } = await db.pool.query<{ error: string }>(
      `SELECT error FROM ${qualified(TEST_SCHEMA, 'report_loads')} WHERE status = 'failed'`,
    );
    // The echo reached report_loads.error, and was redacted there (so the scan below can fail).
    expect(rows.some((r) => r.error.includes('[REDACTED]'))).toBe(true);
    expect(suite.logLines.some((l) => l.includes('[REDACTED]'))).toBe(true);

    const scans = await suite.scan();
    const found = scans.flatMap((s) => s.found);
    const searched = scans[0]?.searched;
    const v = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    book.add({
      id: 'secrets/scan',
      title: 'API key searched everywhere',
      injected: `canary key; the API echoes it in 500 and 400 bodies; 20% 500s, 10% drops; LOG_LEVEL=trace`,
      periodsExact: v.exact,
      periodsTotal: v.total,
      duplicates: v.duplicates,
      retries: 0,
      failedAsExpected: failed,
      notes: `key found in ${found.length} places; searched ${searched?.logLines} log lines, ${searched?.redisKeys} Redis keys, a ${searched?.dumpBytes}-byte pg_dump, ${searched?.rawBodies} archived bodies`,
      ms: Date.now() - started,
    });
    expect(found).toEqual([]);
    expect(searched?.redisKeys).toBeGreaterThan(0);
    expect(searched?.logLines).toBeGreaterThan(10);
    expect(v).toMatchObject({ exact: 11, total: 12, duplicates: 0 });
  });
});
