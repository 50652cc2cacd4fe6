// Reports must agree: the totals of every daily report of a day are equal unless late data explains
// the gap. A broken total fails `adops status --check` naming account, day and both reports, and a
// re-pull clears it; reports loaded at different emulator clocks inside the window are not flagged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkProblems } from '../../../src/status/render.js';
import { Registry } from 'prom-client';
import { disagreementEvents, readDisagreements } from '../../../src/status/agreement.js';
import { readFreshness, registerReportGauges } from '../../../src/worker/metrics.js';
import { collectStatus } from '../../../src/status/status.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { runCli } from '../../helpers/run-cli.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { cliEnv, lastDays, pullDays, REPORTS } from './fill.js';

const S = TEST_SCHEMA;
const DAYS = 5;
const byName = (name: string) => REPORTS.filter((r) => r.name === name);

describe('a broken total of one report', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  const days = lastDays(DAYS);
  // The oldest day: both its loads are after its late-data window (lookback_days 3) closed.
  const day = days[0] as string;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ seed: 11, cellsPerDay: 60, lateDataDays: 0 });
    await pullDays(db, emulator, days);
  });
  afterAll(async () => {
    await emulator?.close();
    await db?.drop();
  });

  // Readable queues (a prefix of its own on the shared Redis): --check fails while they cannot be read.
  const prefix = testPrefix();
  const check = () =>
    runCli(['status', '--check', '--days', String(DAYS)], {
      ...cliEnv(db, emulator),
      REDIS_URL,
      ADOPS_QUEUE: 'redis',
      ADOPS_QUEUE_PREFIX: prefix,
    });

  it('fails adops status --check naming account, day and both reports; a re-pull clears it', async () => {
    const before = await check();
    expect(before.stdout).toContain('ok:');
    expect(before.code).toBe(0);

    await db.pool.query(
      `UPDATE ${S}.report_totals SET impressions = impressions + 7
        WHERE account = 'default' AND report = 'daily_zone' AND period_start = $1`,
      [day],
    );
    const broken = await check();
    expect(broken.code).toBe(1);
    const lines = broken.stdout.split('\n').filter((l) => l.includes('disagree'));
    expect(lines).toHaveLength(1);
    // Named against the majority's newest load; the broken side is the larger, loaded no later.
    const m = new RegExp(
      `^default ${day}: daily_zone and (\\w+) disagree: impressions (\\d+) vs (\\d+) \\(loaded `,
    ).exec(lines[0] ?? '');
    expect(m, lines[0]).not.toBeNull();
    expect(Number(m?.[2]) - Number(m?.[3])).toBe(7);
    expect(REPORTS.map((r) => r.name)).toContain(m?.[1]);
    const status = await runCli(['status', '--days', String(DAYS)], cliEnv(db, emulator));
    expect(status.stdout).toContain('Reports that disagree');
    expect(status.stdout).toContain(`default ${day}: daily_zone and`);

    // The /metrics gauge counts the period for both reports, the webhook announces it once.
    const registry = new Registry();
    registerReportGauges(registry, () => readFreshness(warehouseOf(db.pool, S), loadJobs('jobs'), DAYS));
    expect(await registry.metrics()).toMatch(/adops_report_disagreeing_periods\{report="daily_zone"\} 1\n/);
    const wh = warehouseOf(db.pool, S);
    const all = await readDisagreements(wh, REPORTS, day, day);
    const events = await disagreementEvents(wh, all);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'report.disagrees',
        report: 'daily_zone',
        period_start: day,
        counters: ['impressions'],
      }),
    ]);
    expect(await disagreementEvents(wh, all)).toEqual([]);

    await pullDays(db, emulator, [day], byName('daily_zone'));
    const healed = await check();
    expect(healed.stdout).not.toContain('disagree');
    expect(healed.code).toBe(0);
  });

  it('flags a smaller total loaded later than a larger one, whatever the window', async () => {
    const yesterday = days.at(-1) as string;
    await db.pool.query(
      `UPDATE ${S}.report_totals SET ad_requests = ad_requests - 1, loaded_at = now() + interval '1 minute'
        WHERE account = 'default' AND report = 'hourly' AND period_start = $1`,
      [yesterday],
    );
    const found = await readDisagreements(warehouseOf(db.pool, S), REPORTS, yesterday, yesterday);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ account: 'default', side: { report: 'hourly' }, explained: false });
    expect(found[0]?.why).toMatch(/the larger numbers \(daily_\w+\) were loaded earlier/);
    await pullDays(db, emulator, [yesterday], byName('hourly'));
    expect(await readDisagreements(warehouseOf(db.pool, S), REPORTS, yesterday, yesterday)).toEqual([]);
  });
});

describe('reports of one day loaded at different emulator clocks', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  const day = lastDays(1)[0] as string;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Late data: a day's numbers grow for 3 days by the emulator's clock, then are final.
    emulator = await startEmulator({ seed: 12, cellsPerDay: 60, lateDataDays: 3 });
  });
  afterAll(async () => {
    await emulator?.close();
    await db?.drop();
  });

  it('are not flagged inside the late-data window when the earlier load holds the smaller numbers', async () => {
    emulator.setNow(new Date(`${day}T12:00:00Z`));
    await pullDays(db, emulator, [day], byName('daily_campaign'));
    emulator.setNow(new Date(`${addDays(day, 3)}T12:00:00Z`));
    await pullDays(db, emulator, [day], byName('daily_zone'));

    const found = await readDisagreements(warehouseOf(db.pool, S), REPORTS, day, day);
    // They do differ: the status shows it, as explained by late data.
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ explained: true, side: { report: 'daily_campaign' } });
    expect(found[0]?.why).toContain('late data');
    const status = await collectStatus(warehouseOf(db.pool, S), loadJobs('jobs'), undefined, 1);
    expect(checkProblems(status).filter((p) => p.kind === 'disagrees')).toEqual([]);
  });
});
