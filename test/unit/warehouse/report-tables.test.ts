import { describe, expect, it } from 'vitest';
import { columnDifferences, copyColumns, indexKeys, tableSpec } from '../../../src/schema/report-tables.js';
import { createTable } from '../../../src/schema/sql.js';
import { DIMENSIONS } from '../../../src/platform/config/dimensions.js';
import { derivedName, reportTable } from '../../../src/platform/pg/handle.js';
import { partitionName } from '../../../src/schema/partitions.js';

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
    const sql = createTable('adops', tableSpec(report));
    expect(sql.table.text).toContain('CREATE TABLE "adops"."report_daily_creative"');
    expect(sql.table.text).toContain('"tier" smallint NOT NULL');
    expect(sql.indexes[0]?.text).toBe(
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

describe('names derived from a report name', () => {
  const longest = `x${'y'.repeat(40)}`;

  it('fit 63 bytes for the longest valid name, its versions, indexes and partitions', () => {
    for (const version of [1, 2, 10, 1_000, 999_999_999]) {
      const table =
        version === 1 ? reportTable(longest) : derivedName(`${reportTable(longest)}__v${version}`);
      const spec = tableSpec({ name: longest, dimensions: DIMENSIONS }, table);
      const names = [spec.table, ...spec.indexes.map((ix) => ix.name), partitionName(table, '2026-12-01')];
      for (const name of names) expect(Buffer.byteLength(name), name).toBeLessThanOrEqual(63);
      // The loader tells this report's tables apart from others by the prefix report_<name>__.
      if (version > 1) expect(table.startsWith(`${reportTable(longest)}__`)).toBe(true);
    }
  });

  it('keep every name that fits, so existing tables and indexes are found again', () => {
    const spec = tableSpec(
      { name: 'daily_campaign', dimensions: ['day', 'campaign_id'] },
      'report_daily_campaign__v2',
    );
    expect(spec.indexes.map((ix) => ix.name)).toEqual([
      'report_daily_campaign__v2_key',
      'report_daily_campaign__v2_campaign_id',
    ]);
    expect(partitionName('report_daily_campaign', '2026-04-01')).toBe('report_daily_campaign__p202604');
  });

  it('shorten a longer one deterministically, apart from its neighbours', () => {
    const a = `${reportTable(longest)}__v2_campaign_id`;
    const b = `${reportTable(longest)}__v2_creative_id`;
    expect(Buffer.byteLength(a)).toBe(64);
    expect(derivedName(a)).toHaveLength(63);
    expect(derivedName(a)).toBe(derivedName(a));
    expect(derivedName(a)).not.toBe(derivedName(b));
    expect(partitionName(`${reportTable(longest)}__v1000`, '2026-01-01')).not.toBe(
      partitionName(`${reportTable(longest)}__v1000`, '2026-02-01'),
    );
  });
});
