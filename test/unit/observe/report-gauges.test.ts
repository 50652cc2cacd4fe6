import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  freshnessOf,
  registerReportGauges,
  type ReportFreshness,
} from '../../../src/observe/report-gauges.js';
import type { ReportStatus } from '../../../src/observe/status.js';

const status = (over: Partial<ReportStatus>): ReportStatus => ({
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
  ...over,
});

const fresh = (over: Partial<ReportFreshness> = {}): ReportFreshness => ({
  report: 'daily',
  lastPeriodEndMs: Date.parse('2026-03-10T00:00:00Z'),
  missing: 1,
  failed: 0,
  unreconciled: 0,
  lastRestatement: null,
  ...over,
});

describe('freshnessOf', () => {
  it('ends a period at the midnight after its last day, whatever the period kind', () => {
    const week = freshnessOf(status({ lastLoaded: '2026-03-02', missing: ['2026-03-09'] }), 0.5);
    expect(new Date(week.lastPeriodEndMs!).toISOString()).toBe('2026-03-09T00:00:00.000Z');
    expect(week).toMatchObject({ missing: 1, failed: 0, lastRestatement: 0.5 });
    const month = freshnessOf(status({ period: 'month', lastLoaded: '2026-02-01' }), null);
    expect(new Date(month.lastPeriodEndMs!).toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(freshnessOf(status({}), null).lastPeriodEndMs).toBeNull();
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
