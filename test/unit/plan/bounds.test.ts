// The bounds of every plan (src/plan/bounds.ts): a period is pulled once it has ended in its report's
// time zone.
import { describe, expect, it } from 'vitest';
import { earliestToday, endedFrom, endedOnly, hasEnded } from '../../../src/plan/bounds.js';
import type { ReportJob } from '../../../src/config/jobs.js';

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
