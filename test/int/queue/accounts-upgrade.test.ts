// A pull queued by the release before accounts (its payload names no account) still runs after the
// upgrade, as account default, and deduplicates against a new pull of the same period.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PULL_JOB } from '../../../src/platform/queue/jobs.js';
import { enqueuePulls, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

it('runs a pull queued without an account as the default account', async () => {
  const { to } = lastDays(1);
  // Exactly what the previous release queued: the report and the period, its dedup id without account.
  const old = await h.queues.pulls.add(
    PULL_JOB,
    { report: 'daily_campaign', periodStart: to, periodEnd: to },
    { jobId: 'p-old-release-1', deduplication: { id: `daily_campaign/${to}/${to}` } },
  );
  // A new request of the same period while it waits is the same job.
  const again = await enqueuePulls(h.queues.pulls, [
    { report: 'daily_campaign', period: { start: to, end: to } },
  ]);
  expect(again[0]).toMatchObject({ jobId: old.id, added: false });
  await h.worker();
  const outcome = await waitForPulls(h.queues.pulls, again, { pollMs: 100 });
  expect(outcome.failed).toEqual([]);
  const { rows } = await h.db.pool.query<{ account: string; status: string; job_id: string }>(
    `SELECT account, status, job_id FROM ${TEST_SCHEMA}.report_loads WHERE report = 'daily_campaign'`,
  );
  expect(rows).toEqual([{ account: 'default', status: 'loaded', job_id: 'p-old-release-1' }]);
}, 60_000);
