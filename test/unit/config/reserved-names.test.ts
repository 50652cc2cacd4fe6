// A report's table is report_<name>: names that would land on the system's own tables, indexes or
// sequences (report_loads, report_totals, report_raw and theirs) are refused at validation.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/platform/config/files.js';
import { parseJob } from '../../../src/platform/config/jobs.js';

const job = (name: string) => `name: ${name}\ndimensions: [day]\nperiod: day\n`;

describe('reserved report names', () => {
  it.each([
    'loads',
    'totals',
    'raw',
    'versions',
    'loads_pkey',
    'loads_load_id_seq',
    'raw_archived',
    'totals_x',
    'versions_pkey',
  ])('refuses %s, listing what is reserved', (name) => {
    expect(() => parseJob(job(name), 'jobs/x.yaml')).toThrow(ConfigError);
    expect(() => parseJob(job(name), 'jobs/x.yaml')).toThrow(
      `jobs/x.yaml: name: "${name}" is reserved: report_${name} would collide with the system's own ` +
        'report_loads, report_totals, report_raw or report_versions; not allowed: loads, totals, raw, versions, or a name starting with loads_, totals_, raw_ or versions_',
    );
  });

  it.each(['loadsx', 'raw2', 'daily_raw', 'download', 'totally'])('accepts %s', (name) => {
    expect(parseJob(job(name), 'jobs/x.yaml').name).toBe(name);
  });

  it('refuses a reserved name for an entities job too, as names share one namespace', () => {
    expect(() => parseJob('name: loads\nkind: entities\n', 'jobs/x.yaml')).toThrow(/"loads" is reserved/);
  });

  it('refuses a name holding __, which marks the versions of a table (report_<name>__v2)', () => {
    expect(() => parseJob(job('daily__v2'), 'jobs/x.yaml')).toThrow(/"daily__v2" holds "__"/);
  });
});
