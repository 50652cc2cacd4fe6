import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/platform/config/files.js';
import { parseJob, type ReportJob } from '../../../src/platform/config/jobs.js';
import { addMonths, retained, retentionBoundary } from '../../../src/plan/retention.js';
import { monthsAhead, partitionName } from '../../../src/schema/partitions.js';
import { monthsBetween } from '../../helpers/partitions.js';

const job = (extra: string) => `name: kept\ndimensions: [day, campaign_id]\n${extra}`;

describe('retention_months', () => {
  it('is read as a whole number of months', () => {
    const report = parseJob(job('retention_months: 24\n'), 'jobs/kept.yaml') as ReportJob;
    expect(report.retentionMonths).toBe(24);
    expect((parseJob(job(''), 'jobs/kept.yaml') as ReportJob).retentionMonths).toBeUndefined();
  });

  it.each(['0', '-1', '1.5', '"12"', '1201', 'true'])('refuses %s, naming the field', (value) => {
    expect(() => parseJob(job(`retention_months: ${value}\n`), 'jobs/kept.yaml')).toThrow(ConfigError);
    expect(() => parseJob(job(`retention_months: ${value}\n`), 'jobs/kept.yaml')).toThrow(
      /jobs\/kept\.yaml: retention_months: .* expected a whole number of months from 1 to 1200/,
    );
  });
});

describe('the retention boundary', () => {
  it('keeps the month holding the day retention_months ago, and everything after', () => {
    expect(retentionBoundary({ retentionMonths: 12 }, new Date('2026-11-23T10:00:00Z'))).toBe('2025-11-01');
    expect(retentionBoundary({ retentionMonths: 1 }, new Date('2026-03-31T23:59:00Z'))).toBe('2026-02-01');
    expect(retentionBoundary({ retentionMonths: 3 }, new Date('2026-01-01T00:00:00Z'))).toBe('2025-10-01');
    expect(retentionBoundary({}, new Date('2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('filters the periods retention dropped out of a window', () => {
    const periods = ['2025-10-31', '2025-11-01', '2025-11-02'].map((d) => ({ start: d, end: d }));
    const now = new Date('2026-11-23T10:00:00Z');
    expect(retained({ retentionMonths: 12 }, periods, now).map((p) => p.start)).toEqual([
      '2025-11-01',
      '2025-11-02',
    ]);
    expect(retained({}, periods, now)).toHaveLength(3);
  });

  it('counts months across years', () => {
    expect(addMonths('2026-01-15', -1)).toBe('2025-12-01');
    expect(addMonths('2025-12-01', 1)).toBe('2026-01-01');
    expect(addMonths('2026-05-31', -29)).toBe('2023-12-01');
  });
});

describe('partition names and months', () => {
  it('names a partition after its table and month, within 63 bytes', () => {
    expect(partitionName('report_daily', '2026-01-01')).toBe('report_daily__p202601');
    expect(() => partitionName('report_daily', '2026-01-02')).toThrow(/first day of a month/);
    // Past 63 bytes the name is shortened (derivedName), never cut by Postgres into another month's.
    const long = partitionName(`report_${'a'.repeat(41)}__v100p`, '2026-01-01');
    expect(Buffer.byteLength(long)).toBe(63);
    expect(long).not.toBe(partitionName(`report_${'a'.repeat(41)}__v100p`, '2026-02-01'));
  });

  it('lists the months of a span and the months ahead', () => {
    expect(monthsBetween('2025-11-30', '2026-02-01')).toEqual([
      '2025-11-01',
      '2025-12-01',
      '2026-01-01',
      '2026-02-01',
    ]);
    expect(monthsAhead(new Date('2026-11-23T10:00:00Z'))).toEqual(['2026-11-01', '2026-12-01', '2027-01-01']);
  });
});
