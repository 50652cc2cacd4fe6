// Backfill and heal through the real queue: Redis, Postgres and the emulator over HTTP.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enqueueBackfill, enqueuePulls, readHealPlan, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { spawnCli } from '../../helpers/cli.js';
import { runCliProcess } from '../../helpers/run-cli.js';
import { createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';
import { runCli } from '../../helpers/run-cli.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const loads = async (status = 'loaded') => {
  const { rows } = await h.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone' AND status = $1`,
    [status],
  );
  return Number(rows[0]?.n);
};

describe('backfill', () => {
  it('does not enqueue a pull twice while one for the same report and days waits', async () => {
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    // Consecutive days of a report share one pull (days_per_request, 7 by default).
    const first = await enqueueBackfill(h.queues.pulls, zone, '2026-01-01', '2026-01-03');
    const second = await enqueueBackfill(h.queues.pulls, zone, '2026-01-01', '2026-01-03');
    const third = await enqueueBackfill(h.queues.pulls, zone, '2026-01-02', '2026-01-04');
    expect([first.added, first.alreadyQueued]).toEqual([1, 0]);
    expect([second.added, second.alreadyQueued]).toEqual([0, 1]);
    expect([third.added, third.alreadyQueued]).toEqual([1, 0]);
    // The duplicate points at the job already waiting, so a caller can wait for it.
    expect(second.pulls[0]?.jobId).toBe(first.pulls[0]?.jobId);
    expect(first.pulls[0]?.data).toMatchObject({ periodStart: '2026-01-01', until: '2026-01-03' });
    expect(await h.queues.pulls.getWaitingCount()).toBe(2);
    // One request per period (days_per_request 1): a period waiting is not enqueued again.
    const each = [{ name: 'default', reports: undefined, daysPerRequest: 1 }];
    const one = await enqueueBackfill(h.queues.pulls, zone, '2026-02-01', '2026-02-03', 'newest-first', each);
    const two = await enqueueBackfill(h.queues.pulls, zone, '2026-02-02', '2026-02-04', 'newest-first', each);
    expect([one.added, one.alreadyQueued, two.added, two.alreadyQueued]).toEqual([3, 0, 1, 2]);
  });

  it('re-pulls a period that was loaded before when asked again', async () => {
    await h.worker();
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const first = await enqueueBackfill(h.queues.pulls, zone, '2026-01-01', '2026-01-03');
    expect((await waitForPulls(h.queues.pulls, first.pulls)).failed).toEqual([]);
    expect(await loads()).toBe(3);
    const again = await enqueueBackfill(h.queues.pulls, zone, '2026-01-01', '2026-01-03');
    expect(again.added).toBe(1);
    const result = await waitForPulls(h.queues.pulls, again.pulls);
    expect(result.completed).toHaveLength(1);
    expect(await loads()).toBe(6);
    // Reloading replaces the period: rows are not duplicated.
    const { rows } = await h.db.pool.query<{ n: string; d: string }>(
      `SELECT count(*) AS n, count(DISTINCT (period_start, zone_id)) AS d FROM "${TEST_SCHEMA}".report_daily_zone`,
    );
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    expect(rows[0]?.n).toBe(rows[0]?.d);
  });

  it('reports progress and the rate while waiting, reading states in small rotating batches', async () => {
    await h.worker();
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const each = [{ name: 'default', reports: undefined, daysPerRequest: 1 }]; // a pull per day
    const { pulls } = await enqueueBackfill(
      h.queues.pulls,
      zone,
      '2026-01-01',
      '2026-01-07',
      'newest-first',
      each,
    );
    const seen: number[] = [];
    const result = await waitForPulls(h.queues.pulls, pulls, {
      onProgress: (p) => seen.push(p.done),
      pollMs: 20,
      batch: 3,
    });
    expect(result.completed).toHaveLength(7);
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(7);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('--wait with no worker says so after a short while, how to start one, and goes on waiting until one comes', async () => {
    const { to } = lastDays(1);
    const cli = spawnCli(['backfill', '--report', 'daily_zone', '--from', to, '--to', to, '--wait'], h.env);
    try {
      const line = await cli.waitFor(/no worker/);
      expect(line).toMatch(
        /no worker seen on the pull queue .* for \d+ s: start one with `adops worker`.*; still waiting/,
      );
      expect(line).toContain(h.config.queue.backend === 'postgres' ? 'ADOPS_QUEUE=postgres' : 'REDIS_URL');
      await h.worker();
      // Seen by its connection's name (on Postgres, application_name), not only by the pull it finishes.
      expect(await h.queues.backend.workersOn(h.queues.pulls)).toBe(1);
      await cli.waitFor(/worker is taking pulls/);
      expect(await cli.exited, cli.stderr()).toBe(0);
      expect(cli.stdout()).toContain('1 pulls done, 0 failed');
    } finally {
      await cli.kill();
    }
  });

  it('--wait with a worker running never says there is none', async () => {
    await h.worker();
    const { from, to } = lastDays(3);
    const run = await runCliProcess(
      ['backfill', '--report', 'daily_zone', '--from', from, '--to', to, '--wait'],
      h.env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/no worker/);
  });
});

describe('heal', () => {
  it('enqueues the periods with no load and those whose last attempt failed, nothing else', async () => {
    const zone = h.jobs.reports.filter((r) => r.name === 'daily_zone');
    const { from, to } = lastDays(4);
    await h.worker();
    const done = await enqueueBackfill(h.queues.pulls, zone, from, to);
    await waitForPulls(h.queues.pulls, done.pulls);
    // Make the newest period's last attempt a failure and forget the oldest one entirely.
    await h.db.pool.query(
      `INSERT INTO "${TEST_SCHEMA}".report_loads (report, period_start, period_end, dimensions, status, http_attempts, error)
       VALUES ('daily_zone', $1, $1, '{day,zone_id}', 'failed', 1, 'boom')`,
      [to],
    );
    await h.db.pool.query(
      `DELETE FROM "${TEST_SCHEMA}".report_totals WHERE report = 'daily_zone' AND period_start = $1`,
      [from],
    );
    await h.db.pool.query(
      `DELETE FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone' AND period_start = $1`,
      [from],
    );
    const heal = async () =>
      enqueuePulls(h!.queues.pulls, await readHealPlan(warehouseOf(h!.db.pool, TEST_SCHEMA), zone, 4));
    const healed = await heal();
    expect(healed.map((p) => p.data.periodStart).sort()).toEqual([from, to]);
    await waitForPulls(h.queues.pulls, healed);
    expect(await heal()).toEqual([]);
  });
});

describe('periods that have not ended', () => {
  it('backfill refuses a range reaching today or later in one line, exit 2, enqueueing nothing', async () => {
    const today = localDate(new Date(), 'UTC');
    const yesterday = addDays(today, -1);
    for (const { from, to } of [
      { from: addDays(today, 1), to: addDays(today, 3) },
      { from: addDays(today, -2), to: today },
    ]) {
      const r = await runCli(['backfill', '--report', 'daily_zone', '--from', from, '--to', to], h.env);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `adops: --to ${to} has not ended for daily_zone (UTC, where it is ${today}): ` +
          `backfill pulls only periods that have ended; use --to ${yesterday} or earlier\n`,
      );
    }
    expect(await h.queues.pulls.count()).toBe(0);
    expect(await loads()).toBe(0);
  });

  it('backfill --today pulls the current period now, recorded provisional; with --from, or without either, it is refused', async () => {
    await h.worker();
    const today = localDate(new Date(), 'UTC');
    const r = await runCli(['backfill', '--report', 'daily_zone', '--today', '--wait'], h.env);
    expect(r.code, r.stderr).toBe(0);
    const { rows } = await h.db.pool.query(
      `SELECT period_start::text AS day, status, provisional FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_zone'`,
    );
    expect(rows).toEqual([{ day: today, status: 'loaded', provisional: true }]);
    const both = await runCli(['backfill', '--all', '--today', '--from', today], h.env);
    expect([both.code, both.stderr]).toEqual([
      2,
      'adops: --today pulls the current period: give it without --from and --to\n',
    ]);
    const neither = await runCli(['backfill', '--report', 'daily_zone'], h.env);
    expect([neither.code, neither.stderr]).toEqual([
      2,
      'adops: backfill needs the periods to pull: give --from and --to, or --today\n',
    ]);
  });

  it('a worker refuses a pull of a period that has not ended, whoever enqueued it, and records nothing', async () => {
    await h.worker();
    const today = localDate(new Date(), 'UTC');
    const tomorrow = addDays(today, 1);
    const pulls = await enqueuePulls(h.queues.pulls, [
      { report: 'daily_zone', period: { start: tomorrow, end: tomorrow } },
      { report: 'daily_zone', period: { start: today, end: today } },
    ]);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    expect(result.completed).toEqual([]);
    expect(result.failed.map((f) => f.reason).sort()).toEqual([
      `TerminalError: daily_zone ${today} has not ended in its time zone (UTC): only an ended period is pulled; it can be pulled from ${tomorrow}`,
      `TerminalError: daily_zone ${tomorrow} has not ended in its time zone (UTC): only an ended period is pulled; it can be pulled from ${addDays(tomorrow, 1)}`,
    ]);
    // Nothing on record: heal pulls these periods once they have ended, as for any never pulled.
    expect(await loads()).toBe(0);
    expect(await loads('failed')).toBe(0);
  });
});
