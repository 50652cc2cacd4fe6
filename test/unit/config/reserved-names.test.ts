// A report's table is report_<name>: names that would land on the system's own tables, indexes or
// sequences (report_loads, report_totals, report_raw and theirs) are refused at validation.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { parseJob } from '../../../src/config/jobs.js';

const job = (name: string) => `name: ${name}\ndimensions: [day]\nperiod: day\n`;

describe('reserved report names', () => {
  it.each(['loads', 'totals', 'raw', 'loads_pkey', 'loads_load_id_seq', 'raw_archived', 'totals_x'])(
    'refuses %s, listing what is reserved',
    (name) => {
      expect(() => parseJob(job(name), 'jobs/x.yaml')).toThrow(ConfigError);
      expect(() => parseJob(job(name), 'jobs/x.yaml')).toThrow(
        `jobs/x.yaml: name: "${name}" is reserved: report_${name} would collide with the system's own ` +
          'report_loads, report_totals or report_raw; not allowed: loads, totals, raw, or a name starting with loads_, totals_ or raw_',
      );
    },
  );

  it.each(['loadsx', 'raw2', 'daily_raw', 'download', 'totally'])('accepts %s', (name) => {
    expect(parseJob(job(name), 'jobs/x.yaml').name).toBe(name);
  });

  it('refuses a reserved name for an entities job too, as names share one namespace', () => {
    expect(() => parseJob('name: loads\nkind: entities\n', 'jobs/x.yaml')).toThrow(/"loads" is reserved/);
  });
});
