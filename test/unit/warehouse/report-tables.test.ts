import { describe, expect, it } from 'vitest';
import {
  columnDifferences,
  copyColumns,
  createTableSql,
  indexKeys,
  tableSpec,
} from '../../../src/warehouse/schema/report-tables.js';

const report = {
  name: 'daily_creative',
  dimensions: ['day', 'campaign_id', 'creative_id', 'tier', 'country'] as const,
};

describe('tableSpec', () => {
  it('types dimension columns per the contract, in definition order, between period and counters', () => {
    const spec = tableSpec(report);
    expect(spec.table).toBe('report_daily_creative');
    expect(spec.columns.map((c) => `${c.name}:${c.type}`)).toEqual([
      'period_start:date',
      'period_end:date',
      'day:date',
      'campaign_id:bigint',
      'creative_id:bigint',
      'tier:smallint',
      'country:text',
      'ad_requests:bigint',
      'filled_impressions:bigint',
      'impressions:bigint',
      'measurable_impressions:bigint',
      'viewable_impressions:bigint',
      'load_id:bigint',
      'loaded_at:timestamp with time zone',
      'account:text',
    ]);
    expect(spec.columns.every((c) => c.notNull)).toBe(true);
  });

  it('has a unique index over account, period and dimensions, text ones by md5, and an index per *_id dimension', () => {
    const spec = tableSpec(report);
    expect(spec.indexes).toEqual([
      {
        name: 'report_daily_creative_key',
        unique: true,
        columns: [
          'account',
          'period_start',
          'period_end',
          'day',
          'campaign_id',
          'creative_id',
          'tier',
          'country',
        ],
        hashed: ['country'],
      },
      { name: 'report_daily_creative_campaign_id', unique: false, columns: ['campaign_id'], hashed: [] },
      { name: 'report_daily_creative_creative_id', unique: false, columns: ['creative_id'], hashed: [] },
    ]);
    expect(indexKeys(spec.indexes[0]!)).toEqual([
      'account',
      'period_start',
      'period_end',
      'day',
      'campaign_id',
      'creative_id',
      'tier',
      '(md5(country)::uuid)',
    ]);
  });

  it('keeps index names within 63 characters for the longest report name', () => {
    const spec = tableSpec({ name: `a${'b'.repeat(40)}`, dimensions: ['creative_id', 'campaign_id'] });
    for (const ix of spec.indexes) expect(ix.name.length).toBeLessThanOrEqual(63);
  });

  it('copies every column but loaded_at, which defaults to the load transaction time', () => {
    const spec = tableSpec(report);
    expect(copyColumns(report.dimensions)).toEqual(
      spec.columns.filter((c) => c.name !== 'loaded_at').map((c) => c.name),
    );
    expect(spec.columns.find((c) => c.name === 'loaded_at')?.default).toBe('now()');
    // Last, as ADD COLUMN puts it on a table of a release before accounts.
    expect(spec.columns.at(-1)?.name).toBe('account');
  });

  it('generates quoted DDL in the schema', () => {
    const sql = createTableSql('adops', tableSpec(report));
    expect(sql.table).toContain('CREATE TABLE "adops"."report_daily_creative"');
    expect(sql.table).toContain('"tier" smallint NOT NULL');
    expect(sql.indexes[0]).toBe(
      'CREATE UNIQUE INDEX IF NOT EXISTS "report_daily_creative_key" ON "adops"."report_daily_creative" ("account", "period_start", "period_end", "day", "campaign_id", "creative_id", "tier", (md5("country")::uuid))',
    );
  });
});

describe('columnDifferences', () => {
  const expected = tableSpec({ name: 'x', dimensions: ['day', 'campaign_id'] }).columns;
  const found = expected.map((c) => ({ name: c.name, type: c.type, notNull: c.notNull }));

  it('is empty when the table matches', () => {
    expect(columnDifferences(expected, found)).toEqual([]);
  });

  it('names a missing, an extra and a retyped column', () => {
    const changed = found
      .filter((c) => c.name !== 'campaign_id')
      .map((c) => (c.name === 'day' ? { ...c, type: 'text' } : c))
      .concat([{ name: 'zone_id', type: 'bigint', notNull: true }]);
    expect(columnDifferences(expected, changed)).toEqual([
      'column day is text, expected date',
      'column campaign_id (bigint) is missing',
      'column zone_id (bigint) is not in the definition',
    ]);
  });

  it('names a change of dimension order', () => {
    const swapped = [...found];
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    expect(columnDifferences(expected, swapped)).toEqual([
      expect.stringMatching(
        /^columns are in order \(period_start, period_end, campaign_id, day, .*expected \(period_start, period_end, day, campaign_id,/,
      ),
    ]);
  });

  it('names a nullable column', () => {
    const nullable = found.map((c) => (c.name === 'day' ? { ...c, notNull: false } : c));
    expect(columnDifferences(expected, nullable)).toEqual([
      'column day is not NOT NULL, expected the opposite',
    ]);
  });
});
