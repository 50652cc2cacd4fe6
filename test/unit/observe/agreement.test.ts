// The rule of reports that must agree: which side differs, and when late data explains it.
import { describe, expect, it } from 'vitest';
import {
  compareSides,
  disagreementLine,
  renderDisagreements,
  type Side,
} from '../../../src/status/agreement.js';

const DAY = '2026-03-10';
const LOOKBACK = new Map([
  ['a', 3],
  ['b', 3],
  ['c', 3],
]);

function side(report: string, impressions: number, loadedAt: string, exact = true): Side {
  return {
    report,
    totals: {
      ad_requests: 1000,
      filled_impressions: 900,
      impressions,
      measurable_impressions: 500,
      viewable_impressions: 300,
    },
    firstLoadedAt: loadedAt,
    lastLoadedAt: loadedAt,
    exact,
  };
}

describe('compareSides', () => {
  it('finds nothing when every report has the same totals', () => {
    expect(
      compareSides(
        [side('a', 800, '2026-03-11T03:00:00.000Z'), side('b', 800, '2026-03-11T04:00:00.000Z')],
        LOOKBACK,
        DAY,
      ),
    ).toEqual([]);
  });

  it('names the one report that differs from the majority', () => {
    const found = compareSides(
      [
        side('a', 800, '2026-03-20T03:00:00.000Z'),
        side('b', 801, '2026-03-20T03:00:00.000Z'),
        side('c', 800, '2026-03-20T03:00:00.000Z'),
      ],
      LOOKBACK,
      DAY,
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ side: { report: 'b' }, counters: ['impressions'], explained: false });
    expect(found[0]?.why).toBe('the larger numbers (b) were loaded at the same time');
  });

  it('explains smaller numbers loaded earlier inside the late-data window', () => {
    const found = compareSides(
      [side('a', 700, '2026-03-11T03:00:00.000Z'), side('b', 800, '2026-03-13T03:00:00.000Z')],
      LOOKBACK,
      DAY,
    );
    expect(found[0]).toMatchObject({ explained: true, side: { report: 'a' }, other: { report: 'b' } });
  });

  it('does not explain smaller numbers loaded after the window closed (day + lookback + 1)', () => {
    const found = compareSides(
      [side('a', 700, '2026-03-14T00:00:00.000Z'), side('b', 800, '2026-03-15T03:00:00.000Z')],
      LOOKBACK,
      DAY,
    );
    expect(found[0]).toMatchObject({ explained: false, why: 'both were loaded after the late-data window' });
  });

  it('does not explain larger numbers loaded earlier, inside the window or not', () => {
    const found = compareSides(
      [side('a', 900, '2026-03-11T03:00:00.000Z'), side('b', 800, '2026-03-12T03:00:00.000Z')],
      LOOKBACK,
      DAY,
    );
    expect(found[0]).toMatchObject({ explained: false });
    expect(found[0]?.why).toContain('the larger numbers (a) were loaded earlier');
  });

  it('does not explain counters that differ in both directions', () => {
    const a = side('a', 700, '2026-03-11T03:00:00.000Z');
    const b = { ...side('b', 800, '2026-03-12T03:00:00.000Z') };
    const found = compareSides([a, { ...b, totals: { ...b.totals, ad_requests: 999 } }], LOOKBACK, DAY);
    expect(found[0]).toMatchObject({ explained: false, why: 'counters differ in both directions' });
  });

  it('skips a counter a side has no total of', () => {
    const b = side('b', 800, '2026-03-20T03:00:00.000Z');
    expect(
      compareSides(
        [side('a', 700, '2026-03-20T03:00:00.000Z'), { ...b, totals: { ...b.totals, impressions: null } }],
        LOOKBACK,
        DAY,
      ),
    ).toEqual([]);
  });

  it('compares a weekly report with a daily one summed over its days, never two sums', () => {
    const week = side('w', 800, '2026-03-20T03:00:00.000Z');
    const daysA = side('a', 790, '2026-03-20T03:00:00.000Z', false);
    const daysB = side('b', 780, '2026-03-20T03:00:00.000Z', false);
    const found = compareSides([week, daysA, daysB], new Map([['w', 3], ...LOOKBACK]), '2026-03-15');
    expect(found.map((d) => `${d.side.report}/${d.other.report}`)).toEqual(['a/w', 'b/w']);
    expect(compareSides([daysA, daysB], LOOKBACK, '2026-03-15')).toEqual([]);
  });

  it('writes one line with account, period, both reports, their sums and load times', () => {
    const [found] = compareSides(
      [side('a', 800, '2026-03-20T03:00:00.000Z'), side('b', 801, '2026-03-20T04:00:00.000Z')],
      LOOKBACK,
      DAY,
    );
    expect(found).toBeDefined();
    if (found === undefined) return;
    expect(disagreementLine({ account: 'north', periodStart: DAY, periodEnd: DAY, ...found })).toBe(
      'north 2026-03-10: a and b disagree: impressions 800 vs 801 (loaded 2026-03-20 03:00Z and 2026-03-20 04:00Z; both were loaded after the late-data window)',
    );
  });

  it('lists the disagreements in the status, those late data cannot explain first', () => {
    const late = compareSides(
      [side('a', 700, '2026-03-11T03:00:00.000Z'), side('b', 800, '2026-03-12T03:00:00.000Z')],
      LOOKBACK,
      DAY,
    );
    const broken = compareSides(
      [side('a', 900, '2026-03-20T03:00:00.000Z'), side('b', 800, '2026-03-20T04:00:00.000Z')],
      LOOKBACK,
      DAY,
    );
    const at = { account: 'default', periodStart: DAY, periodEnd: DAY };
    const lines = renderDisagreements([...late, ...broken].map((d) => ({ ...at, ...d })));
    expect(lines[1]).toMatch(/^Reports that disagree/);
    expect(lines[2]).toContain('impressions 900 vs 800');
    expect(lines[3]).toContain('impressions 700 vs 800');
    expect(renderDisagreements([])).toEqual([]);
  });
});
