// The queue commands' own contract: usage errors exit 2, work failures exit 1, --dry-run needs no Redis.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { runCliProcess } from '../../helpers/run-cli.js';
import { REDIS_URL } from '../../helpers/redis.js';

async function adops(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _enc, done) {
        into.push(chunk.toString());
        done();
      },
    });
  const code = await main(
    ['node', 'adops', ...args],
    { ADOPS_JOBS_DIR: 'jobs', LOG_LEVEL: 'silent', ...env },
    sink(out),
    sink(err),
  );
  return { code, out: out.join(''), err: err.join('') };
}

// A port nothing listens on: commands that need Redis must fail at once, not hang.
const NO_REDIS = { REDIS_URL: 'redis://127.0.0.1:1' };

describe('adops backfill', () => {
  it('--dry-run prints each pull and the API request it would make, without Redis', async () => {
    const args = ['backfill', '--report', 'daily_zone,hourly', '--from', '2026-01-30', '--to', '2026-02-01'];
    const env = { ...NO_REDIS, ADOPS_BASE_URL: 'http://ads.example/v2' };
    const r = await adops([...args, '--dry-run'], env);
    expect(r.code).toBe(0);
    const request = (dims: string, from: string, to = from) =>
      `GET http://ads.example/v2/reports?date_from=${from}&date_until=${to}&${dims}`;
    const zone = 'dimensions=day&dimensions=zone_id';
    const hour = 'dimensions=day&dimensions=hour';
    // Consecutive days of a report in one request (days_per_request, 7 by default).
    expect(r.out.split('\n').slice(0, 2)).toEqual([
      `daily_zone 2026-01-30..2026-02-01: ${request(zone, '2026-01-30', '2026-02-01')}`,
      `hourly 2026-01-30..2026-02-01: ${request(hour, '2026-01-30', '2026-02-01')}`,
    ]);
    expect(r.out).toContain('2 pulls over 2 report(s): 2 API calls');
    // A request per period: newest period first, every report of a period together.
    const each = await adops([...args, '--dry-run'], { ...env, ADOPS_DAYS_PER_REQUEST: '1' });
    expect(each.out.split('\n').slice(0, 6)).toEqual([
      `daily_zone 2026-02-01: ${request(zone, '2026-02-01')}`,
      `hourly 2026-02-01: ${request(hour, '2026-02-01')}`,
      `daily_zone 2026-01-31: ${request(zone, '2026-01-31')}`,
      `hourly 2026-01-31: ${request(hour, '2026-01-31')}`,
      `daily_zone 2026-01-30: ${request(zone, '2026-01-30')}`,
      `hourly 2026-01-30: ${request(hour, '2026-01-30')}`,
    ]);
    expect(each.out).toContain('6 pulls over 2 report(s): 6 API calls');
  });

  it('--dry-run prints the request in the form ADOPS_REPORT_PARAMS chooses, the body of json-body', async () => {
    const args = ['backfill', '--report', 'daily_zone', '--from', '2026-02-01', '--to', '2026-02-01'];
    const comma = await adops([...args, '--dry-run'], { ...NO_REDIS, ADOPS_REPORT_PARAMS: 'comma' });
    // No ADOPS_BASE_URL: the path relative to it.
    expect(comma.out.split('\n')[0]).toBe(
      'daily_zone 2026-02-01: GET /reports?date_from=2026-02-01&date_until=2026-02-01&dimensions=day%2Czone_id',
    );
    const json = await adops([...args, '--dry-run'], { ...NO_REDIS, ADOPS_REPORT_PARAMS: 'json-body' });
    expect(json.out.split('\n')[0]).toBe(
      'daily_zone 2026-02-01: GET /reports {"date_from":"2026-02-01","date_until":"2026-02-01","dimensions":["day","zone_id"]}',
    );
  });

  it('says which of --report and --all is wrong: neither given, or both', async () => {
    const range = ['--from', '2026-01-01', '--to', '2026-01-02', '--dry-run'];
    const neither = await adops(['backfill', ...range]);
    expect([neither.code, neither.err]).toEqual([
      2,
      'adops: backfill needs the reports to pull: give --report NAME or --all (neither was given)\n',
    ]);
    const both = await adops(['backfill', '--all', '--report', 'hourly', ...range]);
    expect([both.code, both.err]).toEqual([
      2,
      'adops: --report and --all were both given: give --report NAME or --all, not both\n',
    ]);
  });

  it('exits 2 on bad usage: both or neither of --report and --all, unknown reports, bad dates', async () => {
    const range = ['--from', '2026-01-01', '--to', '2026-01-02', '--dry-run'];
    expect((await adops(['backfill', ...range])).code).toBe(2);
    expect((await adops(['backfill', '--all', '--report', 'hourly', ...range])).code).toBe(2);
    const unknown = await adops(['backfill', '--report', 'nope', ...range]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('known: daily_campaign');
    expect((await adops(['backfill', '--all', '--from', '2026-02-30', '--to', '2026-03-01'])).code).toBe(2);
    const reversed = await adops(['backfill', '--all', '--from', '2026-03-02', '--to', '2026-03-01']);
    expect([reversed.code, reversed.err]).toEqual([2, expect.stringContaining('is after --to')]);
  });

  it('names its outage bound --queue-outage-seconds; the old --redis-outage-seconds still works, unlisted', async () => {
    for (const command of ['backfill', 'heal', 'sync']) {
      const help = await adops([command, '--help']);
      expect(help.out).toContain('--queue-outage-seconds <s>');
      expect(help.out).not.toContain('--redis-outage-seconds');
    }
    const range = ['--all', '--from', '2026-01-01', '--to', '2026-01-02', '--dry-run'];
    const bad = await adops(['backfill', ...range, '--queue-outage-seconds', '0']);
    expect([bad.code, bad.err]).toEqual([2, expect.stringContaining("'--queue-outage-seconds <s>'")]);
    for (const flag of ['--queue-outage-seconds', '--redis-outage-seconds']) {
      const r = await adops(['backfill', ...range, flag, '30'], NO_REDIS);
      expect([r.code, r.err]).toEqual([0, '']);
    }
  });

  it('refuses dates outside 1970-01-01..2999-12-31 in one line, no stack trace (0001-01-01 crashed)', async () => {
    for (const { from, to } of [
      { from: '0001-01-01', to: '0001-01-03' },
      { from: '2026-01-01', to: '9999-12-31' },
    ]) {
      const r = await adops(['backfill', '--all', '--from', from, '--to', to, '--dry-run']);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      const far = from < '1970' ? `--from: ${from}` : `--to: ${to}`;
      expect(r.err.split('\n')[0]).toMatch(
        `${far} is outside the dates adops plans, 1970-01-01 to 2999-12-31`,
      );
      expect(r.err).not.toMatch(/\n\s+at /);
    }
  });

  it('exits 1 at once, naming REDIS_URL, when Redis is unreachable', async () => {
    const started = Date.now();
    const r = await adops(['backfill', '--all', '--from', '2026-01-01', '--to', '2026-01-02'], NO_REDIS);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Redis at redis:\/\/127\.0\.0\.1:1 is not reachable .*check REDIS_URL/);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

describe('adops schedule', () => {
  it('exits 1 naming REDIS_URL when Redis is unreachable', async () => {
    const r = await adops(['schedule'], NO_REDIS);
    expect([r.code, r.err]).toEqual([1, expect.stringContaining('check REDIS_URL')]);
  });
});

describe('adops heal and status', () => {
  it('exit 1 naming DATABASE_URL when Postgres is unreachable', async () => {
    const env = { ...NO_REDIS, DATABASE_URL: 'postgres://root@127.0.0.1:1/nothing' };
    const heal = await adops(['heal', '--dry-run'], env);
    expect([heal.code, heal.err]).toEqual([1, expect.stringContaining('check DATABASE_URL')]);
    const status = await adops(['status'], env);
    expect([status.code, status.err]).toEqual([1, expect.stringContaining('check DATABASE_URL')]);
  });

  it('a Postgres socket folder that does not exist is one line naming DATABASE_URL and the PG* variables, no stack trace', async () => {
    // PGHOST is read by pg from the process environment, so this case runs as a child process.
    const status = await runCliProcess(['status'], {
      ...NO_REDIS,
      ADOPS_JOBS_DIR: 'jobs',
      LOG_LEVEL: 'silent',
      PGHOST: '/nonexistent',
    });
    const heal = await adops(['heal', '--dry-run'], { DATABASE_URL: 'postgres:///x?host=/nonexistent' });
    for (const r of [
      { code: status.code, err: status.stderr },
      { code: heal.code, err: heal.err },
    ]) {
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        /^adops: cannot connect to Postgres \(ENOENT: .*\/nonexistent\/\.s\.PGSQL\.5432\); check DATABASE_URL or the PG\* variables\n$/,
      );
    }
  });

  it('status with Postgres down and Redis up blames Postgres only', async () => {
    // As a child process: the false warning came from a timer that outlived the command.
    const status = await runCliProcess(['status'], {
      REDIS_URL,
      DATABASE_URL: 'postgres://root@127.0.0.1:1/nothing',
      ADOPS_JOBS_DIR: 'jobs',
      LOG_LEVEL: 'warn',
    });
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/^adops: cannot connect to Postgres \(ECONNREFUSED: .*check DATABASE_URL/);
    expect(status.stderr).not.toMatch(/Redis/);
    expect(status.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('every command that reads the warehouse', () => {
  it.each([
    [['evolve']],
    [['evolve', '--plan']],
    [['replay', '--load-id', '1']],
    [['sync', '--direct']],
    [['demo', '--days', '1']],
  ])('adops %s with Postgres down is one line naming DATABASE_URL, exit 1, no stack trace', async (args) => {
    const r = await adops(args, {
      DATABASE_URL: 'postgres://root@127.0.0.1:1/nothing',
      REDIS_URL,
      ADOPS_BASE_URL: 'http://127.0.0.1:9/v2',
      ADOPS_API_KEY: 'demo-key',
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^adops: cannot connect to Postgres \(ECONNREFUSED: .*\); check DATABASE_URL or the PG\* variables\n$/,
    );
  });
});
