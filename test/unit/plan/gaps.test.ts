import { describe, expect, it } from 'vitest';
import { periodsToHeal, tickPlan, zeroRowOutliers, type PeriodState } from '../../../src/plan/gaps.js';
import { periodsBetween } from '../../../src/dates/periods.js';

const state = (
  start: string,
  lastStatus: PeriodState['lastStatus'],
  rows: number | null = 5,
): PeriodState => ({
  start,
  end: start,
  lastStatus,
  rows,
  lastLoadedAt: null,
  error: lastStatus === 'failed' ? 'boom' : null,
});

describe('periodsToHeal', () => {
  it('picks periods with no attempt and periods whose last attempt failed', () => {
    const expected = periodsBetween('2026-01-01', '2026-01-05', 'day');
    const states = [
      state('2026-01-01', 'loaded'),
      state('2026-01-02', 'failed'),
      state('2026-01-04', 'superseded'),
      state('2026-01-05', 'loaded', 0),
    ];
    expect(periodsToHeal(expected, states).map((p) => p.start)).toEqual(['2026-01-02', '2026-01-03']);
  });
});

describe('tickPlan', () => {
  it('keeps the whole window and adds the newest gaps outside it, capped', () => {
    const window = periodsBetween('2026-01-08', '2026-01-09', 'day');
    const gaps = periodsBetween('2026-01-01', '2026-01-09', 'day');
    const plan = tickPlan(window, gaps, 3);
    expect(plan.window.map((p) => p.start)).toEqual(['2026-01-08', '2026-01-09']);
    expect(plan.gaps.map((p) => p.start)).toEqual(['2026-01-07', '2026-01-06', '2026-01-05']);
  });

  it('adds no gaps when the cap is zero', () => {
    expect(tickPlan([], periodsBetween('2026-01-01', '2026-01-02', 'day'), 0).gaps).toEqual([]);
  });
});

describe('zeroRowOutliers', () => {
  it('flags a loaded zero-row period whose loaded neighbour had rows, not a run of quiet days', () => {
    const states = [
      state('2026-01-01', 'loaded', 10),
      state('2026-01-02', 'loaded', 0),
      state('2026-01-03', 'loaded', 12),
      state('2026-01-10', 'loaded', 0),
      state('2026-01-11', 'loaded', 0),
      state('2026-01-04', 'failed', null),
    ];
    // 2026-01-10 has 2026-01-03 (12 rows) as its nearest loaded neighbour before it.
    expect(zeroRowOutliers(states).map((s) => s.start)).toEqual(['2026-01-02', '2026-01-10']);
    expect(zeroRowOutliers([state('2026-01-01', 'loaded', 0), state('2026-01-02', 'loaded', 0)])).toEqual([]);
  });
});
