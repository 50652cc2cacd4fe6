// The per-report freshness gauges of /metrics, checked against what the warehouse holds.
import { afterEach, describe, expect, it } from 'vitest';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { createHarness, type Harness } from '../../helpers/pipeline.js';
import { TEST_SCHEMA } from '../../helpers/db.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The value of `metric{report="<report>"}` in a Prometheus text exposition, or undefined. */
function gauge(text: string, metric: string, report: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{report="${report}"} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('report freshness gauges', () => {
  it('say how new each report is and what its window lacks, as the warehouse has it', async () => {
    h = await createHarness();
    const worker = await h.worker({ metrics: { port: 0, host: '127.0.0.1' } });
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const first = await enqueueBackfill(h.queues.pulls, zone, addDays(yesterday, -2), yesterday);
    await waitForPulls(h.queues.pulls, first.pulls, { pollMs: 50 });
    // A second pull of yesterday is a re-pull: its restatement is measured.
    const again = await enqueueBackfill(h.queues.pulls, zone, yesterday, yesterday);
    await waitForPulls(h.queues.pulls, again.pulls, { pollMs: 50 });
    // The oldest period's only attempt is recorded as failed for good.
    await h.db.pool.query(
      `UPDATE "${TEST_SCHEMA}".report_loads SET status = 'failed', error = 'test'
        WHERE report = 'daily_zone' AND period_start = $1`,
      [addDays(yesterday, -2)],
    );

    const text = await (await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`)).text();
    const { rows } = await h.db.pool.query<{ end: string; loaded: number; failed: number }>(
      `SELECT to_char(max(period_end) FILTER (WHERE status = 'loaded'), 'YYYY-MM-DD') AS end,
              count(DISTINCT period_start) FILTER (WHERE status = 'loaded')::int AS loaded,
              count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone'`,
    );
    const warehouse = rows[0]!;
    expect(warehouse.end).toBe(yesterday);
    const endSeconds = Date.parse(`${addDays(warehouse.end, 1)}T00:00:00Z`) / 1000;
    expect(gauge(text, 'adops_report_last_period_end_timestamp_seconds', 'daily_zone')).toBe(endSeconds);
    const age = gauge(text, 'adops_report_data_age_seconds', 'daily_zone')!;
    expect(Math.abs(age - (Date.now() / 1000 - endSeconds))).toBeLessThan(60);
    expect(gauge(text, 'adops_report_failed_periods', 'daily_zone')).toBe(warehouse.failed);
    // The window is the last ADOPS_HEAL_DAYS days; the failed period has a record, so it is not missing.
    expect(gauge(text, 'adops_report_missing_periods', 'daily_zone')).toBe(h.config.healDays - 3);
    expect(gauge(text, 'adops_report_unreconciled_periods', 'daily_zone')).toBe(0);
    expect(gauge(text, 'adops_report_last_restatement_ratio', 'daily_zone')).toBe(0);
    // A report never pulled: everything missing, no end, no restatement.
    expect(gauge(text, 'adops_report_missing_periods', 'daily_campaign')).toBe(h.config.healDays);
    expect(gauge(text, 'adops_report_last_period_end_timestamp_seconds', 'daily_campaign')).toBeUndefined();
    expect(gauge(text, 'adops_report_last_restatement_ratio', 'daily_campaign')).toBeUndefined();
  });
});
