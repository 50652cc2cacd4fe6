import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  gaugeValues,
  registerPacingGauge,
  registerReportGauges,
  type ReportFreshness,
} from '../../../src/worker/metrics.js';
import type { ReportStatus } from '../../../src/status/status.js';

const status = (over: Partial<ReportStatus>): ReportStatus => ({
  account: 'default',
  report: 'weekly',
  period: 'week',
  lastLoaded: null,
  expected: 4,
  loaded: 0,
  missing: [],
  failed: [],
  unreconciled: [],
  zeroRows: [],
  cells: [],
  freshness: { limitHours: 48, ageHours: null, late: true },
  overdue: [],
  ...over,
});

const fresh = (over: Partial<ReportFreshness> = {}): ReportFreshness => ({
  report: 'daily',
  lastPeriodEndMs: Date.parse('2026-03-10T00:00:00Z'),
  freshnessMs: 48 * 3_600_000,
  missing: 1,
  failed: 0,
  unreconciled: 0,
  lastRestatement: null,
  ...over,
});

describe('gaugeValues', () => {
  it('ends a period at the midnight after its last day in the report time zone, whatever its kind', () => {
    const weekly = { period: 'week' as const, schedule: undefined, freshnessMs: undefined };
    const week = gaugeValues(weekly, status({ lastLoaded: '2026-03-02', missing: ['2026-03-09'] }), 0.5);
    expect(new Date(week.lastPeriodEndMs!).toISOString()).toBe('2026-03-09T00:00:00.000Z');
    expect(week).toMatchObject({ missing: 1, failed: 0, lastRestatement: 0.5 });
    // A week plus the default schedule interval of a day.
    expect(week.freshnessMs).toBe(8 * 24 * 3_600_000);
    const monthly = {
      period: 'month' as const,
      schedule: { cron: '0 3 * * *', timezone: 'Europe/Berlin' },
      freshnessMs: 3_600_000,
    };
    const month = gaugeValues(monthly, status({ period: 'month', lastLoaded: '2026-02-01' }), null);
    expect(new Date(month.lastPeriodEndMs!).toISOString()).toBe('2026-02-28T23:00:00.000Z');
    expect(month.freshnessMs).toBe(3_600_000);
    expect(gaugeValues(weekly, status({}), null).lastPeriodEndMs).toBeNull();
  });
});

describe('registerReportGauges', () => {
  it('reads the warehouse at most once per cache period and keeps the last values when it fails', async () => {
    const registry = new Registry();
    let reads = 0;
    let fail = false;
    let clock = 1_000_000;
    registerReportGauges(
      registry,
      async () => {
        reads++;
        if (fail) throw new Error('Postgres down');
        return [fresh({ missing: reads })];
      },
      { cacheMs: 30_000, now: () => clock },
    );
    const scrape = () => registry.metrics();
    expect(await scrape()).toContain('adops_report_missing_periods{report="daily"} 1');
    await scrape();
    expect(reads).toBe(1);
    clock += 30_000;
    expect(await scrape()).toContain('adops_report_missing_periods{report="daily"} 2');
    fail = true;
    clock += 30_000;
    expect(await scrape()).toContain('adops_report_missing_periods{report="daily"} 2');
    expect(reads).toBe(3);
    const text = await scrape();
    expect(text).toContain(
      `adops_report_data_age_seconds{report="daily"} ${(clock - Date.parse('2026-03-10T00:00:00Z')) / 1000}`,
    );
    expect(text).not.toContain('adops_report_last_restatement_ratio{');
  });
});

describe('the gauges of several accounts', () => {
  it("label an account's series with it, and leave the default account's as before accounts", async () => {
    const registry = new Registry();
    const weekly = { period: 'week' as const, schedule: undefined, freshnessMs: undefined };
    const north = gaugeValues(
      weekly,
      status({ account: 'north', missing: ['2026-03-01', '2026-03-02'] }),
      null,
    );
    expect(north.account).toBe('north');
    expect(gaugeValues(weekly, status({}), null).account).toBeUndefined();
    registerReportGauges(registry, async () => [
      fresh({ missing: 1 }),
      fresh({ account: 'north', missing: 2 }),
    ]);
    const text = await registry.metrics();
    expect(text).toContain('adops_report_missing_periods{report="daily"} 1');
    expect(text).toContain('adops_report_missing_periods{report="daily",account="north"} 2');
  });
});

describe('a report with no loaded period', () => {
  it('has a data age from the start of its oldest missing period, never_loaded 1 and its overdue count', async () => {
    const daily = {
      period: 'day' as const,
      schedule: { cron: '0 3 * * *', timezone: 'Europe/Berlin' },
      freshnessMs: undefined,
    };
    const never = gaugeValues(
      daily,
      status({ period: 'day', missing: ['2026-03-08', '2026-03-07', '2026-03-09'], overdue: ['2026-03-07'] }),
      null,
    );
    expect(never.lastPeriodEndMs).toBeNull();
    // Midnight of 2026-03-07 in Berlin.
    expect(new Date(never.neverLoadedSinceMs!).toISOString()).toBe('2026-03-06T23:00:00.000Z');
    expect(never.overdue).toBe(1);
    // Loaded once: its age counts from its newest period as before, and it is not "never loaded".
    const loaded = gaugeValues(
      daily,
      status({ period: 'day', lastLoaded: '2026-03-09', missing: ['2026-03-08'] }),
      null,
    );
    expect(loaded.neverLoadedSinceMs).toBeNull();

    const registry = new Registry();
    const clock = Date.parse('2026-03-10T12:00:00Z');
    registerReportGauges(registry, async () => [{ ...never, account: 'north' }, fresh()], {
      now: () => clock,
    });
    const text = await registry.metrics();
    expect(text).toContain(
      `adops_report_data_age_seconds{report="weekly",account="north"} ${(clock - never.neverLoadedSinceMs!) / 1000}`,
    );
    expect(text).toContain('adops_report_never_loaded{report="weekly",account="north"} 1');
    expect(text).toContain('adops_report_never_loaded{report="daily"} 0');
    expect(text).toContain('adops_report_overdue_periods{report="weekly",account="north"} 1');
    expect(text).not.toContain('adops_report_last_period_end_timestamp_seconds{report="weekly"');
  });

  it('has no data age while nothing is due (no missing period): nothing to alert on yet', () => {
    const weekly = { period: 'week' as const, schedule: undefined, freshnessMs: undefined };
    expect(gaugeValues(weekly, status({}), null).neverLoadedSinceMs).toBeNull();
  });
});

describe('registerPacingGauge', () => {
  it('shows the campaigns behind per account, drops an account gone, and keeps the last values when a read fails', async () => {
    const registry = new Registry();
    let rows = [
      { account: 'default', behind: 2 },
      { account: 'north', behind: 0 },
    ];
    let clock = 0;
    registerPacingGauge(
      registry,
      async () => {
        if (rows.length === 0) throw new Error('bi_campaign_pacing is missing');
        return rows;
      },
      { cacheMs: 1000, now: () => clock },
    );
    const scrape = async () => (await registry.getSingleMetric('adops_campaigns_behind')?.get())?.values;
    expect(await scrape()).toEqual([
      { labels: { account: 'default' }, value: 2 },
      { labels: { account: 'north' }, value: 0 },
    ]);
    rows = [{ account: 'north', behind: 1 }];
    clock += 1000;
    expect(await scrape()).toEqual([{ labels: { account: 'north' }, value: 1 }]);
    rows = [];
    clock += 1000;
    expect(await scrape()).toEqual([{ labels: { account: 'north' }, value: 1 }]);
  });
});
