import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReportJob } from '../../../src/config/jobs.js';
import { addDays, DateFormatError } from '../../../src/dates/calendar.js';
import { periodsBetween, type PeriodUnit } from '../../../src/dates/periods.js';
import { backfillPulls, countBackfill, planBackfill } from '../../../src/plan/backfill.js';
import type { PlannedPull } from '../../../src/plan/pull.js';

const job = (name: string, period: PeriodUnit) => ({ name, period }) as unknown as ReportJob;

/** The plan as it was built before it streamed: every period of every report, stably sorted by end. */
function reference(reports: readonly ReportJob[], from: string, to: string, newest: boolean): PlannedPull[] {
  const byReport = reports.flatMap((r) =>
    periodsBetween(from, to, r.period).map((period) => ({ report: r.name, period })),
  );
  if (!newest) return byReport;
  return byReport.sort((a, b) => (a.period.end === b.period.end ? 0 : a.period.end > b.period.end ? -1 : 1));
}

describe('backfillPulls', () => {
  it('gives newest periods first, every report of a period end before the one before', () => {
    const plan = planBackfill([job('a', 'day'), job('b', 'week')], '2026-01-03', '2026-01-05');
    expect(plan.map((p) => `${p.report} ${p.period.start}..${p.period.end}`)).toEqual([
      'b 2026-01-05..2026-01-11',
      'a 2026-01-05..2026-01-05',
      'a 2026-01-04..2026-01-04',
      'b 2025-12-29..2026-01-04',
      'a 2026-01-03..2026-01-03',
    ]);
  });

  it('is, in both orders, the stable sort of every report and period, for any mix of reports and range', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<PeriodUnit>('day', 'week', 'month'), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 120 }),
        fc.boolean(),
        (units, start, len, newest) => {
          const reports = units.map((u, i) => job(`r${i}`, u));
          const from = addDays('1990-01-01', start);
          const to = addDays(from, len);
          const order = newest ? 'newest-first' : 'oldest-first';
          expect([...backfillPulls(reports, from, to, order)]).toEqual(reference(reports, from, to, newest));
          expect(countBackfill(reports, from, to)).toBe(reference(reports, from, to, false).length);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('streams: the first pulls of a plan of a million come without building the rest', () => {
    const reports = Array.from({ length: 100 }, (_, i) => job(`r${i}`, 'day'));
    const pulls = backfillPulls(reports, '1990-01-01', '2017-05-18');
    const first = pulls.next();
    expect(first.value).toEqual({ report: 'r0', period: { start: '2017-05-18', end: '2017-05-18' } });
    expect(pulls.next().value).toEqual({ report: 'r1', period: { start: '2017-05-18', end: '2017-05-18' } });
  });

  it('refuses an empty range when called, before the first pull', () => {
    expect(() => backfillPulls([job('a', 'day')], '2026-01-02', '2026-01-01')).toThrow(DateFormatError);
  });
});
