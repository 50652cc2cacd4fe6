import { describe, expect, it } from 'vitest';
import { parseDuration, parseJob, type ReportJob } from '../../../src/platform/config/jobs.js';
import { ConfigError } from '../../../src/platform/config/files.js';
import {
  freshnessLimitMs,
  freshnessOf,
  isDue,
  periodEndInstant,
  scheduleIntervalMs,
} from '../../../src/plan/freshness.js';

const H = 3_600_000;
const nightly = { cron: '0 3 * * *', timezone: 'UTC' };
const daily: Pick<ReportJob, 'period' | 'schedule' | 'freshnessMs'> = { period: 'day', schedule: nightly };

describe('freshness durations', () => {
  it('reads a whole number with m, h or d', () => {
    expect(parseDuration('90m')).toBe(90 * 60_000);
    expect(parseDuration('30h')).toBe(30 * H);
    expect(parseDuration('2d')).toBe(48 * H);
  });

  it('rejects anything else, zero and more than 366 days', () => {
    for (const bad of ['30', 'h', '1.5h', '-2d', '0h', '2w', '30 hours', '367d', ''])
      expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('is validated in a job definition with a one-line error naming the field', () => {
    const yaml = 'name: z\ndimensions: [day]\nperiod: day\nfreshness: %s\n';
    expect(parseJob(yaml.replace('%s', '30h'), 'jobs/z.yaml')).toMatchObject({ freshnessMs: 30 * H });
    expect(parseJob(yaml.replace('%s', '~'), 'jobs/z.yaml')).not.toHaveProperty('freshnessMs');
    expect(() => parseJob(yaml.replace('%s', '30 hours'), 'jobs/z.yaml')).toThrow(ConfigError);
    expect(() => parseJob(yaml.replace('%s', '12'), 'jobs/z.yaml')).toThrow(
      /^jobs\/z\.yaml: freshness: 12 is not a duration; expected .*90m, 30h or 2d/,
    );
  });
});

describe('freshness limit', () => {
  it('is the declared freshness when there is one', () => {
    expect(freshnessLimitMs({ ...daily, freshnessMs: 30 * H })).toBe(30 * H);
  });

  it('defaults to the period plus the schedule interval', () => {
    expect(freshnessLimitMs(daily)).toBe(48 * H);
    expect(freshnessLimitMs({ period: 'week', schedule: nightly })).toBe(8 * 24 * H);
    expect(freshnessLimitMs({ period: 'month', schedule: nightly })).toBe(32 * 24 * H);
    expect(freshnessLimitMs({ period: 'day', schedule: undefined })).toBe(48 * H);
    expect(scheduleIntervalMs({ cron: '0 */6 * * *', timezone: 'UTC' })).toBe(6 * H);
    expect(scheduleIntervalMs({ cron: '0 3 * * 1', timezone: 'Europe/Berlin' })).toBe(7 * 24 * H);
  });
});

describe('lateness', () => {
  it("measures from the end of the newest loaded period in the schedule's time zone", () => {
    expect(periodEndInstant({ end: '2026-01-04' }, 'UTC').toISOString()).toBe('2026-01-05T00:00:00.000Z');
    expect(periodEndInstant({ end: '2026-01-04' }, 'Europe/Berlin').toISOString()).toBe(
      '2026-01-04T23:00:00.000Z',
    );
  });

  it('is fresh up to the limit and late past it, and late when nothing is loaded', () => {
    const newest = { end: '2026-01-04' };
    expect(freshnessOf(daily, newest, new Date('2026-01-06T23:00:00Z'))).toEqual({
      limitMs: 48 * H,
      ageMs: 47 * H,
      late: false,
    });
    expect(freshnessOf(daily, newest, new Date('2026-01-07T01:00:00Z')).late).toBe(true);
    expect(
      freshnessOf({ ...daily, freshnessMs: 30 * H }, newest, new Date('2026-01-06T07:00:00Z')).late,
    ).toBe(true);
    expect(freshnessOf(daily, undefined, new Date())).toMatchObject({ ageMs: null, late: true });
  });

  it('counts a missing period as due only once it is older than the limit', () => {
    // Yesterday, before the night's tick: not yet due.
    expect(isDue(daily, { end: '2026-01-04' }, new Date('2026-01-05T02:00:00Z'))).toBe(false);
    expect(isDue(daily, { end: '2026-01-02' }, new Date('2026-01-05T02:00:00Z'))).toBe(true);
  });
});
