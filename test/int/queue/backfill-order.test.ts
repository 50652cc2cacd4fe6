// Backfills load the newest periods first (dashboards get recent days first); --oldest-first keeps
// the old order. Requests of 2 days (ADOPS_DAYS_PER_REQUEST): a request loads its periods oldest
// first. Through the real CLI, queue, worker and warehouse.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { runCli } from '../../helpers/run-cli.js';
import { createHarness, type Harness } from '../../helpers/pipeline.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ env: { ADOPS_DAYS_PER_REQUEST: '2' } });
});
afterEach(async () => {
  await h.close();
});

/** report and period start of each load, in the order they were loaded. */
async function loadOrder(): Promise<string[]> {
  const { rows } = await h.db.pool.query<{ report: string; day: string }>(
    `SELECT report, to_char(period_start, 'YYYY-MM-DD') AS day
       FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded' ORDER BY load_id`,
  );
  return rows.map((r) => `${r.report} ${r.day}`);
}

/** Backfills two reports over four days (two requests each) with the CLI, then lets one worker of
 * concurrency 1 work. */
async function backfillThenWork(extra: string[]): Promise<string[]> {
  const args = ['backfill', '--report', 'daily_zone,daily_campaign', '--from', '2026-01-01'];
  const run = await runCli([...args, '--to', '2026-01-04', ...extra], h.env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const jobs = await h.queues.pulls.getJobs(['waiting', 'prioritized']);
  expect(jobs).toHaveLength(4);
  await h.worker({ concurrency: 1 });
  const pulls = jobs.map((j) => ({ data: j.data, jobId: j.id ?? '', added: true }));
  expect((await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 })).failed).toEqual([]);
  return loadOrder();
}

describe('backfill order', () => {
  it('loads the newest periods first, every report of the newest days before the days before', async () => {
    expect(await backfillThenWork([])).toEqual([
      'daily_zone 2026-01-03',
      'daily_zone 2026-01-04',
      'daily_campaign 2026-01-03',
      'daily_campaign 2026-01-04',
      'daily_zone 2026-01-01',
      'daily_zone 2026-01-02',
      'daily_campaign 2026-01-01',
      'daily_campaign 2026-01-02',
    ]);
  });

  it('--oldest-first keeps the old order: report by report, oldest period first', async () => {
    expect(await backfillThenWork(['--oldest-first'])).toEqual([
      'daily_zone 2026-01-01',
      'daily_zone 2026-01-02',
      'daily_zone 2026-01-03',
      'daily_zone 2026-01-04',
      'daily_campaign 2026-01-01',
      'daily_campaign 2026-01-02',
      'daily_campaign 2026-01-03',
      'daily_campaign 2026-01-04',
    ]);
  });
});
