// Malformed and totals-less report bodies through a real worker: a broken answer is retried and
// the next one loads; the same broken body twice in a row fails the pull for good, its body kept;
// a body without totals loads and shows in `adops status` as unreconciled, "no totals".
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { collectStatus } from '../../../src/status/status.js';
import { renderStatus } from '../../../src/status/render.js';
import { readArchivedBody } from '../../../src/pull/archive.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const HTML = '<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>';
const leaf =
  '{"ad_requests":9,"filled_impressions":8,"impressions":7,"measurable_impressions":6,"viewable_impressions":5}';

/** One daily_zone pull of yesterday through the worker: its job and the period's load records. */
async function pullYesterday(harness: Harness) {
  const zone = harness.jobs.reports.filter((r) => r.name === 'daily_zone') as ReportJob[];
  const { to } = lastDays(1);
  const { pulls } = await enqueueBackfill(harness.queues.pulls, zone, to, to);
  const result = await waitForPulls(harness.queues.pulls, pulls, { pollMs: 50 });
  const job = await harness.queues.pulls.getJob(pulls[0]!.jobId);
  const { rows: loads } = await harness.db.pool.query<{
    load_id: string;
    status: string;
    http_attempts: number;
    error: string | null;
    reconciled: boolean | null;
    unreconciled_reason: string | null;
  }>(
    `SELECT load_id::text, status, http_attempts, error, reconciled, unreconciled_reason
       FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone' ORDER BY load_id`,
  );
  const bodies = await Promise.all(
    loads.map(async (l) =>
      (await readArchivedBody(warehouseOf(harness.db.pool, TEST_SCHEMA), Number(l.load_id)))?.toString(),
    ),
  );
  return {
    day: to,
    result,
    job,
    loads,
    bodies,
    requests: harness.emulator.stats().requests['GET /v2/reports'],
  };
}

describe('a malformed report answer', () => {
  it('caught by the client (an HTML page with 200) is retried within the request, and the next answer loads', async () => {
    h = await createHarness();
    h.emulator.override({
      path: '/v2/reports',
      status: 200,
      body: HTML,
      headers: { 'content-type': 'text/html' },
    });
    await h.worker();
    const run = await pullYesterday(h);
    expect(run.result.completed).toHaveLength(1);
    expect(run.job?.attemptsMade).toBe(1);
    expect(run.requests).toBe(2);
    expect(run.loads).toMatchObject([{ status: 'loaded', http_attempts: 2, reconciled: true }]);
  });

  it('found by the parser is a failed load with its body kept, retried by the queue, and the next answer loads', async () => {
    h = await createHarness();
    const { to } = lastDays(1);
    // Ends with "}" like a whole object, so only the parser sees that it is cut short.
    const broken = `{"items":{"${to}":{"5":${leaf}}`;
    h.emulator.override({ path: '/v2/reports', status: 200, body: broken });
    await h.worker();
    const run = await pullYesterday(h);
    expect(run.result.completed).toHaveLength(1);
    expect(run.job?.attemptsMade).toBe(2);
    expect(run.loads.map((l) => l.status)).toEqual(['failed', 'loaded']);
    expect(run.loads[0]?.error).toMatch(
      /^MalformedBodyError: report body is malformed: not valid JSON: the body ends early/,
    );
    expect(run.bodies[0]).toBe(broken);
  });

  it('that repeats byte for byte fails the pull for good, each answer archived', async () => {
    h = await createHarness();
    const { to } = lastDays(1);
    const broken = `{"items":{"${to}":{"5":${leaf}}`;
    // Exactly two answers: the first attempt's, and the retry's, which repeats it.
    h.emulator.override({ path: '/v2/reports', status: 200, body: broken, times: 2 });
    await h.worker();
    const run = await pullYesterday(h);
    expect(run.result.completed).toEqual([]);
    expect(run.result.failed).toHaveLength(1);
    expect(run.result.failed[0]?.reason).toMatch(/MalformedBodyError: .*came twice in a row/);
    expect(run.job?.attemptsMade).toBe(2);
    expect(run.requests).toBe(2);
    expect(run.loads.map((l) => l.status)).toEqual(['failed', 'failed']);
    expect(run.loads[1]?.error).toMatch(/the same body \(sha256 [0-9a-f]{64}\) came twice in a row/);
    expect(run.bodies).toEqual([broken, broken]);
  });

  it('that the client sees twice in a row fails for good at once, the page archived with the failed pull', async () => {
    h = await createHarness();
    h.emulator.override({
      path: '/v2/reports',
      status: 200,
      body: HTML,
      headers: { 'content-type': 'text/html' },
      times: 2,
    });
    await h.worker();
    const run = await pullYesterday(h);
    expect(run.result.failed).toHaveLength(1);
    expect(run.result.failed[0]?.reason).toMatch(
      /ApiResponseError: .*an HTML page; the same body twice in a row/,
    );
    expect(run.job?.attemptsMade).toBe(1);
    expect(run.requests).toBe(2);
    expect(run.loads).toMatchObject([{ status: 'failed', http_attempts: 2 }]);
    expect(run.bodies).toEqual([HTML]);
  });
});

describe('a report answer without totals', () => {
  it('loads its rows, and status shows the period unreconciled for "no totals"', async () => {
    h = await createHarness();
    const { to } = lastDays(1);
    h.emulator.override({
      path: '/v2/reports',
      status: 200,
      body: `{"items":{"${to}":{"5":${leaf}}},"totals":[]}`,
    });
    await h.worker();
    const run = await pullYesterday(h);
    expect(run.result.completed).toHaveLength(1);
    expect(run.loads).toMatchObject([
      { status: 'loaded', reconciled: false, unreconciled_reason: 'no totals' },
    ]);
    const status = await collectStatus(warehouseOf(h.db.pool, TEST_SCHEMA), h.jobs, h.queues, 2);
    const zone = status.reports.find((r) => r.report === 'daily_zone');
    expect(zone?.unreconciled).toEqual([{ period: to, reason: 'no totals', mismatch: null }]);
    expect(zone?.failed).toEqual([]);
    expect(renderStatus(status)).toContain(`daily_zone ${to}: no totals: the API sent none`);
  });
});
