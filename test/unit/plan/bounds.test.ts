// The bounds of every plan (src/plan/bounds.ts): a period is pulled once it has ended in its report's
// time zone.
import { describe, expect, it } from 'vitest';
import {
  earliestToday,
  endedFrom,
  endedOnly,
  fromStart,
  hasEnded,
  startOf,
} from '../../../src/plan/bounds.js';
import type { ReportJob } from '../../../src/platform/config/jobs.js';

const at = new Date('2026-03-10T03:00:00Z'); // 2026-03-10 in UTC and Berlin, 2026-03-09 in Los Angeles
const report = (name: string, timezone: string): Pick<ReportJob, 'name' | 'schedule'> => ({
  name,
  schedule: { cron: '0 3 * * *', timezone },
});

describe('hasEnded', () => {
  it('is true once the last day of the period is over in the time zone, not before', () => {
    expect(hasEnded({ end: '2026-03-09' }, 'UTC', at)).toBe(true);
    expect(hasEnded({ end: '2026-03-10' }, 'UTC', at)).toBe(false);
    expect(hasEnded({ end: '2026-03-11' }, 'UTC', at)).toBe(false);
    // Still 2026-03-09 in Los Angeles: that day has not ended there.
    expect(hasEnded({ end: '2026-03-09' }, 'America/Los_Angeles', at)).toBe(false);
    expect(hasEnded({ end: '2026-03-08' }, 'America/Los_Angeles', at)).toBe(true);
    expect(endedFrom({ end: '2026-03-15' })).toBe('2026-03-16');
  });
});

describe('earliestToday', () => {
  it('names the report whose today comes first: a backfill may reach the day before it', () => {
    expect(earliestToday([report('a', 'Europe/Berlin'), report('b', 'America/Los_Angeles')], at)).toEqual({
      report: 'b',
      timezone: 'America/Los_Angeles',
      today: '2026-03-09',
    });
    expect(earliestToday([], at)).toBeUndefined();
  });
});

describe('endedOnly', () => {
  it('drops the periods still under way in their report zone, keeping the order of the rest', () => {
    const pulls = [
      { report: 'weekly', period: { start: '2026-03-09', end: '2026-03-15' } },
      { report: 'daily', period: { start: '2026-03-09', end: '2026-03-09' } },
      { report: 'weekly', period: { start: '2026-03-02', end: '2026-03-08' } },
      { report: 'la', period: { start: '2026-03-09', end: '2026-03-09' } },
    ];
    const kept = [
      ...endedOnly(
        pulls,
        [report('weekly', 'UTC'), report('daily', 'UTC'), report('la', 'America/Los_Angeles')],
        at,
      ),
    ];
    expect(kept.map((p) => `${p.report} ${p.period.start}`)).toEqual([
      'daily 2026-03-09',
      'weekly 2026-03-02',
    ]);
  });
});

describe('start dates', () => {
  it('are the later of the report and the account start_date, or none', () => {
    expect(startOf({ startDate: '2025-01-01' }, { startDate: '2025-03-01' })).toBe('2025-03-01');
    expect(startOf({ startDate: '2025-05-01' }, { startDate: '2025-03-01' })).toBe('2025-05-01');
    expect(startOf({ startDate: '2025-05-01' }, {})).toBe('2025-05-01');
    expect(startOf({}, { startDate: '2025-03-01' })).toBe('2025-03-01');
    expect(startOf({}, {})).toBeUndefined();
  });

  it('keep the periods ending on or after the start: the week or month holding it stays whole', () => {
    const weeks = [
      { start: '2025-02-24', end: '2025-03-02' },
      { start: '2025-03-03', end: '2025-03-09' },
      { start: '2025-03-10', end: '2025-03-16' },
    ];
    expect(fromStart(weeks, '2025-03-05')).toEqual(weeks.slice(1));
    expect(fromStart(weeks, undefined)).toEqual(weeks);
    expect(fromStart(weeks, '2025-04-01')).toEqual([]);
  });
});
