import { describe, expect, it } from 'vitest';
import {
  isOurScheduler,
  schedulerId,
  asPullData,
  pullData,
  pullDedupId,
  pullPeriod,
} from '../../../src/platform/queue/jobs.js';
import { pullLabel } from '../../../src/plan/pulls.js';

describe('pull payload', () => {
  it('holds the account, the report and the period and nothing else', () => {
    const data = pullData('daily_zone', { start: '2026-01-01', end: '2026-01-01' });
    expect(Object.keys(data).sort()).toEqual(['account', 'periodEnd', 'periodStart', 'report']);
    expect(data.account).toBe('default');
    // The default account keeps the dedup id of the release before accounts.
    expect(pullDedupId(data)).toBe('daily_zone/2026-01-01/2026-01-01');
    expect(pullLabel({ report: data.report, period: pullPeriod(data) })).toBe('daily_zone 2026-01-01');
  });

  it("keeps another account's pull of the same period apart", () => {
    const data = pullData('daily_zone', { start: '2026-01-01', end: '2026-01-01' }, undefined, 'north');
    expect(pullDedupId(data)).toBe('north/daily_zone/2026-01-01/2026-01-01');
    expect(pullLabel({ account: 'north', report: data.report, period: pullPeriod(data) })).toBe(
      'north/daily_zone 2026-01-01',
    );
  });

  it('reads a payload of the release before accounts as the default account', () => {
    const old = asPullData({ report: 'a', periodStart: '2026-01-01', periodEnd: '2026-01-01' });
    expect(old).toEqual({
      account: 'default',
      report: 'a',
      periodStart: '2026-01-01',
      periodEnd: '2026-01-01',
    });
    expect(pullDedupId(old!)).toBe('a/2026-01-01/2026-01-01');
  });

  it('keeps a provisional pull apart from a final one of its period, and reads its flag back', () => {
    const data = {
      ...pullData('daily_zone', { start: '2026-01-01', end: '2026-01-01' }),
      provisional: true as const,
    };
    expect(pullDedupId(data)).toBe('daily_zone/2026-01-01/2026-01-01/today');
    expect(asPullData(data)).toEqual(data);
    expect(asPullData({ ...data, provisional: 'yes' })).not.toHaveProperty('provisional');
    expect(schedulerId('today', 'daily_zone')).toBe('adops-today-daily_zone');
    expect(isOurScheduler('adops-today-daily_zone')).toBe(true);
  });

  it('rejects job data that does not have that shape', () => {
    expect(asPullData({ report: 'a', periodStart: '2026-01-01', periodEnd: '2026-01-01' })).toBeDefined();
    expect(asPullData({ report: 'a', periodStart: '2026-1-1', periodEnd: '2026-01-01' })).toBeUndefined();
    expect(
      asPullData({ account: 'No Such', report: 'a', periodStart: '2026-01-01', periodEnd: '2026-01-01' }),
    ).toBeUndefined();
    expect(asPullData(null)).toBeUndefined();
  });
});

describe('scheduler ids', () => {
  it('are recognised as ours, and ids that are not ours are not', () => {
    expect(schedulerId('report', 'daily_zone')).toBe('adops-report-daily_zone');
    expect(schedulerId('entities', 'catalogue', 'north')).toBe('adops-entities-catalogue@north');
    expect(schedulerId('entities', 'catalogue', 'default')).toBe('adops-entities-catalogue');
    for (const id of ['adops-report-daily_zone', 'adops-entities-catalogue@north'])
      expect(isOurScheduler(id)).toBe(true);
    for (const id of ['someone-else', 'adops-report-', 'adops-other-x', 'adops-report-x@', 'adops-report-X'])
      expect(isOurScheduler(id)).toBe(false);
  });
});
