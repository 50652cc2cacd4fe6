import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIMENSIONS } from '../../../src/platform/config/dimensions.js';
import { ConfigError } from '../../../src/platform/config/files.js';
import { loadJobs, parseJob } from '../../../src/platform/config/jobs.js';

const valid = `name: daily_campaign
dimensions: [day, campaign_id]
period: day
lookback_days: 3
schedule: { cron: "0 3 * * *", timezone: "Europe/Berlin" }
`;

function rejects(text: string): string {
  try {
    parseJob(text, 'jobs/x.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  }
  throw new Error('expected the job to be rejected');
}

describe('job definitions', () => {
  it('parses a valid definition keeping dimension order', () => {
    const job = parseJob(valid, 'jobs/x.yaml');
    expect(job).toMatchObject({
      kind: 'report',
      name: 'daily_campaign',
      dimensions: ['day', 'campaign_id'],
      period: 'day',
      lookbackDays: 3,
      schedule: { cron: '0 3 * * *', timezone: 'Europe/Berlin' },
    });
  });

  it('reads start_date, a date from 1970-01-01 to 2999-12-31, and refuses anything else in one line', () => {
    expect(parseJob(`${valid}start_date: 2025-01-01\n`, 'jobs/x.yaml')).toMatchObject({
      startDate: '2025-01-01',
    });
    expect(parseJob(valid, 'jobs/x.yaml')).not.toHaveProperty('startDate');
    expect(rejects(`${valid}start_date: 2025-02-30\n`)).toBe(
      'jobs/x.yaml: start_date: "2025-02-30" is not a calendar date: expected YYYY-MM-DD, e.g. 2025-01-01',
    );
    expect(rejects(`${valid}start_date: 20250101\n`)).toBe(
      'jobs/x.yaml: start_date: 20250101 is not a date: expected YYYY-MM-DD, e.g. 2025-01-01',
    );
    expect(rejects(`${valid}start_date: 0001-01-01\n`)).toBe(
      'jobs/x.yaml: start_date: 0001-01-01 is outside the dates adops plans, 1970-01-01 to 2999-12-31',
    );
  });

  it('reads today: { every: D } of 5 minutes or more, and refuses anything else naming the file and field', () => {
    expect(parseJob(`${valid}today: { every: 30m }\n`, 'jobs/x.yaml')).toMatchObject({
      today: { everyMs: 1_800_000 },
    });
    expect(parseJob(`${valid}today: { every: 5m }\n`, 'jobs/x.yaml')).toMatchObject({
      today: { everyMs: 300_000 },
    });
    expect(parseJob(valid, 'jobs/x.yaml')).not.toHaveProperty('today');
    const wanted = 'expected a duration of 5 minutes or more, like 30m or 2h';
    expect(rejects(`${valid}today: { every: 4m }\n`)).toBe(
      `jobs/x.yaml: today.every: "4m" is not allowed; ${wanted}`,
    );
    expect(rejects(`${valid}today: { every: 30 }\n`)).toBe(
      `jobs/x.yaml: today.every: 30 is not allowed; ${wanted}`,
    );
    expect(rejects(`${valid}today: {}\n`)).toBe(
      `jobs/x.yaml: today.every: missing is not allowed; ${wanted}`,
    );
    expect(rejects(`${valid}today: 30m\n`)).toBe('jobs/x.yaml: today: expected a mapping { every: 30m }');
    expect(rejects(`${valid}today: { every: 30m, cron: x }\n`)).toBe(
      'jobs/x.yaml: today.cron: unknown field; allowed: every',
    );
  });

  it('loads the shipped default definitions', () => {
    const { reports, entities } = loadJobs('jobs');
    expect(reports.map((r) => [r.name, r.dimensions.join(',')])).toEqual([
      ['daily_campaign', 'day,campaign_id'],
      ['daily_creative', 'day,campaign_id,creative_id'],
      ['daily_geo_device', 'day,country,device'],
      ['daily_zone', 'day,zone_id'],
      ['hourly', 'day,hour'],
    ]);
    expect(entities.map((e) => e.name)).toEqual(['entities']);
  });

  it('lists the allowed dimensions when one is unknown', () => {
    const message = rejects(valid.replace('campaign_id]', 'campaign]'));
    expect(message).toContain('jobs/x.yaml: dimensions[1]: "campaign" is not a dimension; allowed: ');
    expect(message).toContain(DIMENSIONS.join(', '));
  });

  it.each([
    [
      'a bad name',
      valid.replace('name: daily_campaign', 'name: Daily-Campaign'),
      /name: "Daily-Campaign" is not allowed; expected/,
    ],
    [
      'an SQL name',
      valid.replace('name: daily_campaign', 'name: "x; drop table y"'),
      /name: .* is not allowed/,
    ],
    [
      'a too long name',
      valid.replace('name: daily_campaign', `name: ${'a'.repeat(42)}`),
      /name: .* is not allowed/,
    ],
    [
      'a duplicate dimension',
      valid.replace('[day, campaign_id]', '[day, day]'),
      /dimensions\[1\]: "day" is listed twice/,
    ],
    ['no dimensions', valid.replace('[day, campaign_id]', '[]'), /dimensions: expected a non-empty list/],
    [
      'a bad period',
      valid.replace('period: day', 'period: hour'),
      /period: "hour" is not allowed; allowed: day, week, month/,
    ],
    [
      'a negative lookback',
      valid.replace('lookback_days: 3', 'lookback_days: -1'),
      /lookback_days: -1 is not allowed/,
    ],
    [
      'a bad cron',
      valid.replace('0 3 * * *', '61 3 * * *'),
      /schedule.cron: "61 3 \* \* \*" is not a valid cron expression/,
    ],
    ['a short cron', valid.replace('0 3 * * *', '0 3 *'), /schedule.cron: "0 3 \*" has 3 fields/],
    [
      'a bad time zone',
      valid.replace('Europe/Berlin', 'Mars/Olympus'),
      /schedule.timezone: "Mars\/Olympus" is not an IANA time zone/,
    ],
    ['an unknown field', `${valid}extra: 1\n`, /extra: unknown field; allowed: /],
    ['broken YAML', 'name: [x', /jobs\/x.yaml: not valid YAML/],
    ['a list at top level', '- a\n- b\n', /\(top level\): expected a mapping/],
  ])('rejects %s with one line naming file and field', (_label, text, message) => {
    expect(rejects(text)).toMatch(message);
  });

  it('accepts an entities job without dimensions', () => {
    expect(
      parseJob('name: catalogue\nkind: entities\nschedule: { cron: "0 2 * * *", timezone: UTC }\n', 'f.yaml'),
    ).toMatchObject({
      kind: 'entities',
      name: 'catalogue',
    });
  });

  it('refuses two files defining the same name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adops-jobs-'));
    writeFileSync(join(dir, 'a.yaml'), valid);
    writeFileSync(join(dir, 'b.yaml'), valid);
    expect(() => loadJobs(dir)).toThrow(/b.yaml: name: "daily_campaign" is already defined in .*a.yaml/);
  });

  it('names ADOPS_JOBS_DIR when the folder is missing', () => {
    expect(() => loadJobs('/nonexistent/jobs')).toThrow(/ADOPS_JOBS_DIR=\/nonexistent\/jobs cannot be read/);
  });
});

describe('schedules more frequent than once a minute', () => {
  const every = (cron: string, extra = '') =>
    valid.replace(
      '{ cron: "0 3 * * *", timezone: "Europe/Berlin" }',
      `{ cron: "${cron}", timezone: UTC${extra} }`,
    );

  it.each([
    ['* * * * * *', 60],
    ['*/30 * * * * *', 2],
    ['0,1 * * * * *', 2],
  ])('refuses "%s", naming the file, the field and how to allow it', (cron, times) => {
    expect(rejects(every(cron))).toBe(
      `jobs/x.yaml: schedule.cron: "${cron}" runs ${times} times a minute; a schedule may run at most once a minute unless the file sets schedule.allow_sub_minute: true`,
    );
  });

  it.each(['* * * * *', '0 * * * * *', '30 */5 * * * *'])('accepts "%s": at most once a minute', (cron) => {
    expect(parseJob(every(cron), 'jobs/x.yaml').schedule?.cron).toBe(cron);
  });

  it('accepts a faster schedule when the file allows it, and nothing but true or false there', () => {
    expect(parseJob(every('*/10 * * * * *', ', allow_sub_minute: true'), 'jobs/x.yaml').schedule?.cron).toBe(
      '*/10 * * * * *',
    );
    expect(rejects(every('0 * * * * *', ', allow_sub_minute: yes please'))).toMatch(
      /^jobs\/x\.yaml: schedule\.allow_sub_minute: expected true or false$/,
    );
  });
});

describe('job files whose text is not a job definition', () => {
  const SECRET = 'sk-live-not-for-your-eyes';
  /** The messages of the warnings `fn` makes the process emit (the yaml library emits some). */
  async function warningsOf(fn: () => void): Promise<string[]> {
    const seen: string[] = [];
    const listen = (w: Error) => seen.push(w.message);
    process.on('warning', listen);
    try {
      fn();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', listen);
    }
    return seen;
  }

  it('refuses a link to a file outside the folder without showing any of its text', () => {
    const outside = mkdtempSync(join(tmpdir(), 'adops-secret-'));
    writeFileSync(join(outside, 'credentials'), `${SECRET}: 1\nother: 2\n`);
    const dir = mkdtempSync(join(tmpdir(), 'adops-jobs-'));
    writeFileSync(join(dir, 'a.yaml'), valid);
    symlinkSync(join(outside, 'credentials'), join(dir, 'b.yaml'));
    let message = '';
    try {
      loadJobs(dir);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/b\.yaml: a symbolic link to a file outside ADOPS_JOBS_DIR/);
    expect(message).not.toContain(SECRET);
  });

  it('follows a link that stays inside the folder, as a Kubernetes ConfigMap mounts its files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adops-jobs-'));
    mkdirSync(join(dir, '..2026_01_01_00_00_00.1'));
    writeFileSync(join(dir, '..2026_01_01_00_00_00.1', 'a.yaml'), valid);
    symlinkSync('..2026_01_01_00_00_00.1', join(dir, '..data'));
    symlinkSync('..data/a.yaml', join(dir, 'a.yaml'));
    expect(loadJobs(dir).reports.map((r) => r.name)).toEqual(['daily_campaign']);
  });

  it.each([
    ['an unknown key that is not a field name', `${SECRET}: 1\n`],
    ['an unknown key after known ones', `${valid}${SECRET.toUpperCase()}: x\n`],
    ['a kind that is not one', `kind: ${SECRET}\n`],
    ['an alias without an anchor', `*${SECRET}\n`],
    ['a bad escape', `name: "\\${SECRET}"\n`],
    ['a block scalar header with extra characters', `name: |${SECRET}\n  x\n`],
    ['an unclosed quote', `name: "${SECRET}\n`],
  ])('names the place, not the text, for %s', async (_label, text) => {
    let message = '';
    const warnings = await warningsOf(() => (message = rejects(text)));
    expect(message).toMatch(/^jobs\/x\.yaml: /);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain(SECRET.toUpperCase());
    expect(warnings.join('\n')).not.toContain(SECRET);
  });

  it('prints no warning quoting the file for a tag or a directive it does not know', async () => {
    const text = `%${SECRET} x\n---\nname: !${SECRET} daily_campaign\ndimensions: [day]\n`;
    const warnings = await warningsOf(() => parseJob(text, 'jobs/x.yaml'));
    expect(warnings.join('\n')).not.toContain(SECRET);
  });

  it('still names an unknown field that reads as a field name, and quotes the values of known fields', () => {
    expect(rejects(`${valid}lookback: 3\n`)).toMatch(/jobs\/x\.yaml: lookback: unknown field; allowed: /);
    expect(rejects(valid.replace('period: day', 'period: hour'))).toMatch(/period: "hour" is not allowed/);
  });
});
