import { describe, expect, it } from 'vitest';
import { isRestated, restatementOf, summarizeRestatements } from '../../../src/pull/history.js';
import type { Counters } from '../../../src/flatten/types.js';

const totals = (n: number, impressions = n): Counters => ({
  ad_requests: n,
  filled_impressions: n,
  impressions,
  measurable_impressions: n,
  viewable_impressions: n,
});

describe('restatementOf', () => {
  it('records the previous total and the change of each counter', () => {
    const r = restatementOf(totals(100), totals(100, 130));
    expect(r.impressions).toEqual({ previous: 100, delta: 30 });
    expect(r.ad_requests).toEqual({ previous: 100, delta: 0 });
    expect(isRestated(r)).toBe(true);
  });

  it('is not a restatement when nothing changed, and counts a drop to zero as one', () => {
    expect(isRestated(restatementOf(totals(5), totals(5)))).toBe(false);
    const zero = restatementOf(totals(5), totals(0));
    expect(isRestated(zero)).toBe(true);
    expect(zero.viewable_impressions.delta).toBe(-5);
  });
});

describe('a load without some totals', () => {
  const none = { ...totals(0), impressions: null, viewable_impressions: null };

  it('measures no change where either load lacks the total', () => {
    const r = restatementOf(none, totals(5, 7));
    expect(r.impressions).toEqual({ previous: null, delta: null });
    expect(r.ad_requests).toEqual({ previous: 0, delta: 5 });
    expect(isRestated(restatementOf(totals(5), { ...totals(5), impressions: null }))).toBe(false);
  });

  it('is left out of the means of the counters it cannot measure', () => {
    const [s] = summarizeRestatements([
      { report: 'a', ageDays: 1, restatement: restatementOf(totals(100), totals(100, 110)) },
      { report: 'a', ageDays: 1, restatement: restatementOf(none, totals(100, 500)) },
    ]);
    expect(s?.avg_abs_change.impressions).toBe(10);
    expect(s?.avg_abs_change.ad_requests).toBe(50);
    expect(s?.loads).toBe(2);
  });
});

describe('summarizeRestatements', () => {
  it('groups reloads by report and age with mean absolute change and largest relative change', () => {
    const summary = summarizeRestatements([
      { report: 'b', ageDays: 1, restatement: restatementOf(totals(100), totals(100, 150)) },
      { report: 'b', ageDays: 1, restatement: restatementOf(totals(100), totals(100)) },
      { report: 'a', ageDays: 3, restatement: restatementOf(totals(10), totals(10, 9)) },
      { report: 'b', ageDays: 0, restatement: restatementOf(totals(0), totals(0, 4)) },
    ]);
    expect(summary.map((s) => [s.report, s.age_days, s.loads, s.restated])).toEqual([
      ['a', 3, 1, 1],
      ['b', 0, 1, 1],
      ['b', 1, 2, 1],
    ]);
    const b1 = summary[2]!;
    expect(b1.avg_abs_change.impressions).toBe(25);
    expect(b1.avg_abs_change.ad_requests).toBe(0);
    expect(b1.max_rel_change).toBeCloseTo(0.5);
    expect(summary[0]!.max_rel_change).toBeCloseTo(0.1);
    expect(summary[1]!.max_rel_change).toBe(1);
  });

  it('returns nothing for no reloads', () => {
    expect(summarizeRestatements([])).toEqual([]);
  });
});
