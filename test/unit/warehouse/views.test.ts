// The BI views' SQL: the generated view of a report without a view file, and the per-day companion (src/schema/views.ts).
import { describe, expect, it } from 'vitest';
import { dailyViewName, dailyViewSql, generatedViewSql } from '../../../src/schema/views-sql.js';
import { refusedViewLine } from '../../../src/schema/views.js';

const COUNTERS = [
  'ad_requests',
  'filled_impressions',
  'impressions',
  'measurable_impressions',
  'viewable_impressions',
];
const RATES = ['fill_rate', 'viewability_rate'];

describe('dailyViewSql', () => {
  it('groups by day and the other dimensions, sums counters and divides sums for rates', () => {
    const sql = dailyViewSql(
      'hourly',
      ['day', 'hour', 'campaign_id', 'campaign_name', ...COUNTERS, ...RATES, 'loaded_at'],
      'day',
    );
    expect(dailyViewName('hourly')).toBe('bi_hourly_daily');
    expect(sql).toContain('CREATE OR REPLACE VIEW "bi_hourly_daily" AS');
    expect(sql).toContain('FROM "bi_hourly" v');
    expect(sql).toContain('GROUP BY v.day, v."campaign_id", v."campaign_name"');
    expect(sql).toContain(
      'sum(v."filled_impressions")::double precision / NULLIF(sum(v."ad_requests"), 0) AS "fill_rate"',
    );
    expect(sql).toContain(
      'sum(v."viewable_impressions")::double precision / NULLIF(sum(v."measurable_impressions"), 0) AS "viewability_rate"',
    );
    expect(sql).toContain('max(v.loaded_at) AS loaded_at');
    // Never an average of the per-row rates, and the hour is summed over, not kept.
    expect(sql).not.toMatch(/avg\(/i);
    expect(sql).not.toContain('v."hour"');
    expect(sql).not.toContain('v."fill_rate"');
  });

  it('takes the day from period_start for a daily report without the day dimension', () => {
    const columns = ['period_start', 'period_end', 'campaign_id', ...COUNTERS, ...RATES, 'loaded_at'];
    const sql = dailyViewSql('per_campaign', columns, 'day');
    expect(sql).toContain('SELECT\n  v.period_start AS day,\n  v."campaign_id"');
    expect(sql).toContain('GROUP BY v.period_start, v."campaign_id"');
  });

  it('makes no companion when rows have no day: a week or month without the day dimension', () => {
    const columns = ['period_start', 'period_end', 'campaign_id', ...COUNTERS];
    expect(dailyViewSql('weekly', columns, 'week')).toBeUndefined();
    expect(dailyViewSql('monthly', columns, 'month')).toBeUndefined();
    expect(dailyViewSql('weekly_by_day', ['day', ...columns], 'week')).toContain('v.day');
  });

  it('leaves out a rate it cannot recompute instead of grouping by it or averaging it', () => {
    const sql = dailyViewSql('custom', ['day', 'zone_id', ...COUNTERS, 'click_rate'], 'day') ?? '';
    expect(sql).not.toContain('click_rate');
    expect(sql).toContain('GROUP BY v.day, v."zone_id"');
  });
});

const COLUMNS = (dims: string[]) => [
  'period_start',
  'period_end',
  ...dims,
  'ad_requests',
  'filled_impressions',
  'impressions',
  'measurable_impressions',
  'viewable_impressions',
  'load_id',
  'loaded_at',
  'account',
];

describe('generatedViewSql', () => {
  it('joins campaign and creative names of the same account when the report has those dimensions', () => {
    const sql = generatedViewSql('mine', COLUMNS(['day', 'campaign_id', 'creative_id', 'country']));
    expect(sql).toContain('CREATE OR REPLACE VIEW "bi_mine" AS');
    expect(sql).toContain('r."day",\n  r."campaign_id",\n  r."creative_id",\n  r."country",');
    expect(sql).toContain('c.name AS campaign_name');
    expect(sql).toContain('k.name AS creative_name');
    expect(sql).toContain('SELECT\n  r.account,\n  r.period_start,');
    expect(sql).toContain(
      'FROM "report_mine" r\nLEFT JOIN campaigns c ON c.account = r.account AND c.campaign_id = r.campaign_id\nLEFT JOIN creatives k ON k.account = r.account',
    );
    expect(sql).not.toContain('r."account"');
    expect(sql).toContain('NULLIF(r.ad_requests, 0) AS fill_rate');
    expect(sql).not.toContain('r."load_id"');
  });

  it("leaves out the campaign's ad_format when the report has ad_format as a dimension: the dimension stays", () => {
    const sql = generatedViewSql('fmt', COLUMNS(['day', 'campaign_id', 'ad_format']));
    expect(sql).toContain('r."ad_format"');
    expect(sql).not.toContain('c.ad_format');
    expect(generatedViewSql('mine', COLUMNS(['day', 'campaign_id']))).toContain('c.ad_format');
  });

  it('joins nothing for a report without campaign or creative dimensions', () => {
    const sql = generatedViewSql('geo', COLUMNS(['day', 'country']));
    expect(sql).not.toContain('JOIN');
    expect(sql).not.toContain('campaign_name');
  });

  it('ends with provisional, per row, and its companion with bool_or of it, never grouping by it', () => {
    const sql = generatedViewSql('geo', COLUMNS(['day', 'country']));
    expect(sql).toContain(
      'r.loaded_at,\n  r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional\nFROM',
    );
    const daily =
      dailyViewSql('geo', ['day', 'country', ...COUNTERS, 'loaded_at', 'provisional'], 'day') ?? '';
    expect(daily).toContain('max(v.loaded_at) AS loaded_at,\n  bool_or(v.provisional) AS provisional\nFROM');
    expect(daily).toMatch(/GROUP BY v\.day, v\."country"$/);
  });
});

describe('refusedViewLine', () => {
  it('says a refused view file lacks provisional, and how to add it', () => {
    expect(
      refusedViewLine({ report: 'daily_zone', status: 'refused', missing: ['provisional'], version: 1 }),
    ).toBe(
      'refused sql/views/daily_zone.sql: bi_daily_zone lacks the column provisional; generated bi_daily_zone instead ' +
        '(every BI view says which rows are provisional: add ' +
        'r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional to the file)',
    );
    expect(
      refusedViewLine({ report: 'z', status: 'refused', missing: ['ad_format', 'provisional'] }),
    ).toMatch(
      /^refused sql\/views\/z\.sql: bi_z lacks the dimension ad_format of report_z; .*told apart by its dimensions/,
    );
  });
});
