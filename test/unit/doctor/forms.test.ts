import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/doctor/verdict.js';
import {
  dayReport,
  GOOD_FORM,
  http,
  lastOnlyReport,
  NOW,
  observations,
  pairReport,
  row,
} from './fixtures.js';

describe('doctor verdict: request forms', () => {
  it('flags a 200 one-level report (only the last dimension kept) as a wrong report, and picks the form that nests', () => {
    const o = observations();
    const lastOnly = { pair: http(200, lastOnlyReport()), day: undefined };
    const v = decide(
      {
        ...o,
        forms: {
          repeat: lastOnly,
          brackets: GOOD_FORM,
          comma: { pair: http(400), day: undefined },
          'json-body': { pair: http(400), day: undefined },
        },
      },
      NOW,
    );
    expect(v.facts.forms.repeat).toEqual({
      outcome: 'wrong',
      detail: 'wrong report: a one-level report by campaign_id: the server kept only the last dimension',
    });
    expect(v.facts.forms.brackets.outcome).toBe('ok');
    expect(v.facts.forms.comma.outcome).toBe('error');
    expect(v.settings?.ADOPS_REPORT_PARAMS).toBe('brackets');
    expect(row(v.rows, 'report params repeat')?.status).toBe('no');
    expect(row(v.rows, 'report params brackets')?.status).toBe('ok');
  });

  it('flags a nested report whose sums differ from the [day] report of the same period', () => {
    const o = observations();
    const off = { pair: http(200, pairReport()), day: http(200, dayReport([['2026-03-01', '1', 9]])) };
    const v = decide({ ...o, forms: { ...o.forms, repeat: off } }, NOW);
    expect(v.facts.forms.repeat.outcome).toBe('wrong');
    expect(v.facts.forms.repeat.detail).toMatch(
      /totals differ from the \[day\] report's \(ad_requests 60 vs 90\)/,
    );
    expect(v.settings?.ADOPS_REPORT_PARAMS).toBe('brackets');
  });

  it('flags a nested report whose rows do not add up to its own totals', () => {
    const o = observations();
    const body = pairReport() as { totals: Record<string, number> };
    const off = { pair: http(200, { ...body, totals: { ...body.totals, impressions: 1 } }), day: undefined };
    const v = decide({ ...o, forms: { ...o.forms, repeat: off } }, NOW);
    expect(v.facts.forms.repeat).toEqual({
      outcome: 'wrong',
      detail: 'wrong report: its rows do not add up to its totals',
    });
  });

  it('flags rows outside the period asked for', () => {
    const o = observations();
    const cells: Array<[string, string, number]> = [['2025-01-01', '1', 1]];
    const v = decide(
      { ...o, forms: { repeat: { pair: http(200, pairReport(cells)), day: http(200, dayReport(cells)) } } },
      NOW,
    );
    expect(v.facts.forms.repeat.detail).toContain('a row for 2025-01-01, outside 2026-03-01..2026-03-07');
  });

  it('fails when no form returns a correct report', () => {
    const o = observations();
    const bad = { pair: http(400), day: undefined };
    const v = decide({ ...o, forms: { repeat: bad, brackets: bad, comma: bad, 'json-body': bad } }, NOW);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual([
      expect.stringContaining('no form of GET /reports returned a correct two-dimension report'),
    ]);
    expect(v.rows.filter((r) => r.check.startsWith('report params')).map((r) => r.status)).toEqual([
      'fail',
      'fail',
      'fail',
      'fail',
    ]);
  });

  it('falls back to an empty report with a warning: nothing to tell the forms apart by', () => {
    const o = observations();
    const empty = { pair: http(200, pairReport([])), day: http(200, dayReport([])) };
    const v = decide(
      { ...o, forms: { repeat: empty, brackets: empty, comma: empty, 'json-body': empty } },
      NOW,
    );
    expect(v.ok).toBe(true);
    expect(v.settings?.ADOPS_REPORT_PARAMS).toBe('repeat');
    expect(row(v.rows, 'report params repeat')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('cannot tell; use this (not proven)'),
    });
  });
});
