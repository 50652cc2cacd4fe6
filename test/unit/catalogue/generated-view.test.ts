import { describe, expect, it } from 'vitest';
import { generatedViewSql } from '../../../src/warehouse/schema/views.js';

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

  it('joins nothing for a report without campaign or creative dimensions', () => {
    const sql = generatedViewSql('geo', COLUMNS(['day', 'country']));
    expect(sql).not.toContain('JOIN');
    expect(sql).not.toContain('campaign_name');
  });
});
