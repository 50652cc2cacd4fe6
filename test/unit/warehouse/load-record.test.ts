import { describe, expect, it } from 'vitest';
import { inOneStatement, insertLoadSql, upsertTotalsSql, type LoadRecord } from '../../../src/pull/sql.js';
import { describeError } from '../../../src/pull/load.js';

const record: LoadRecord = {
  account: 'default',
  report: 'daily_campaign',
  period: { start: '2026-01-01', end: '2026-01-01' },
  dimensions: ['day', 'campaign_id'],
  status: 'failed',
  rows: null,
  reconciled: null,
  unreconciledReason: null,
  mismatch: null,
  restatement: null,
  previousLoadId: null,
  replayOf: null,
  httpAttempts: 3,
  responseBytes: null,
  fetchMs: 12.6,
  loadMs: null,
  fetchedAt: null,
  fetchToken: null,
  error: 'x'.repeat(10_000),
  failedStep: 'fetch',
  jobId: 'job-1',
};

describe('insertLoadSql', () => {
  it('passes every value as a parameter, one placeholder each', () => {
    const sql = insertLoadSql('adops', record);
    const placeholders = sql.text.match(/\$\d+/g) ?? [];
    expect(placeholders).toHaveLength(sql.values.length);
    expect(sql.text).toContain('INSERT INTO "adops"."report_loads"');
    expect(sql.text).not.toContain('daily_campaign');
  });

  it('rounds durations and caps a huge error text', () => {
    const sql = insertLoadSql('adops', record);
    expect(sql.values).toContain(13);
    expect((sql.values.find((v) => typeof v === 'string' && v.startsWith('xxx')) as string).length).toBe(
      4000,
    );
  });

  it('puts a reserved load_id first when one is given', () => {
    const sql = insertLoadSql('adops', { ...record, loadId: 77 });
    expect(sql.text).toMatch(/\("load_id", "account", "report"/);
    expect(sql.values[0]).toBe(77);
  });
});

describe('upsertTotalsSql', () => {
  it('replaces the totals, their source and the owning load on conflict, one array per column', () => {
    const totals = (n: number) => ({
      ad_requests: n,
      filled_impressions: n + 1,
      impressions: null,
      measurable_impressions: n + 3,
      viewable_impressions: n + 4,
    });
    const sql = upsertTotalsSql(
      'adops',
      'north',
      'r',
      [
        { period: { start: '2026-01-01', end: '2026-01-01' }, totals: totals(1), loadId: 9 },
        { period: { start: '2026-01-02', end: '2026-01-02' }, totals: totals(10), loadId: 10 },
      ],
      'rows',
    );
    expect(sql.values).toEqual([
      'north',
      'r',
      'rows',
      ['2026-01-01', '2026-01-02'],
      ['2026-01-01', '2026-01-02'],
      [1, 10],
      [2, 11],
      [null, null],
      [4, 13],
      [5, 14],
      [9, 10],
    ]);
    expect(sql.text).toContain('ON CONFLICT (account, report, period_start, period_end) DO UPDATE SET');
    expect(sql.text).toContain('load_id = EXCLUDED.load_id');
    expect(sql.text).toContain('totals_source = EXCLUDED.totals_source');
  });

  it("gives one period's totals as values, with the same placeholders", () => {
    const totals = {
      ad_requests: 1,
      filled_impressions: 2,
      impressions: 3,
      measurable_impressions: 4,
      viewable_impressions: 5,
    };
    const sql = upsertTotalsSql('adops', 'north', 'r', [
      { period: { start: '2026-01-01', end: '2026-01-07' }, totals, loadId: 9 },
    ]);
    expect(sql.values).toEqual(['north', 'r', 'api', '2026-01-01', '2026-01-07', 1, 2, 3, 4, 5, 9]);
    expect(sql.text).toContain('VALUES ($1, $2, $4::date, $5::date');
    expect(sql.text).not.toContain('unnest');
  });
});

describe('inOneStatement', () => {
  it("chains the statements as CTEs and renumbers each one's placeholders after the previous values", () => {
    const one = inOneStatement([
      { text: 'INSERT INTO a (x, y) VALUES ($1, $2) RETURNING id', values: [1, 2] },
      { text: 'INSERT INTO b (z) VALUES ($1)', values: ['z'] },
      { text: 'INSERT INTO c (p, q, r) VALUES ($1, $2, $3)', values: [3, 4, 5] },
    ]);
    expect(one).toEqual({
      text:
        'WITH s0 AS (INSERT INTO a (x, y) VALUES ($1, $2) RETURNING id), s1 AS (INSERT INTO b (z) VALUES ($3)), ' +
        's2 AS (INSERT INTO c (p, q, r) VALUES ($4, $5, $6)) SELECT 1',
      values: [1, 2, 'z', 3, 4, 5],
    });
  });

  it('keeps two-digit placeholders whole', () => {
    const ten = Array.from({ length: 12 }, (_, i) => `$${i + 1}`).join(', ');
    const one = inOneStatement([
      { text: 'SELECT $1', values: [0] },
      { text: `INSERT INTO t VALUES (${ten})`, values: Array.from({ length: 12 }, (_, i) => i) },
    ]);
    expect(one.text).toContain('VALUES ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)');
  });
});

describe('describeError', () => {
  it('chains the causes so the audit row explains itself', () => {
    const error = new Error('outer', { cause: new TypeError('inner') });
    expect(describeError(error)).toBe('Error: outer <- caused by TypeError: inner');
  });
});
