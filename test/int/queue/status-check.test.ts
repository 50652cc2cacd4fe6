// `adops status --check` through the real CLI binary (a child process) on real Postgres and Redis:
// exit 1 naming a late report, exit 0 once heal and a worker caught up, exit 2 on bad usage.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, runCliProcess } from '../../helpers/run-cli.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { clearOfMidnight, createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';

let h: Harness;
let jobsDir: string;
let env: Record<string, string>;
beforeEach(async () => {
  h = await createHarness();
  // Two nightly daily reports (default freshness: a day plus the nightly interval, 48 h).
  jobsDir = mkdtempSync(join(tmpdir(), 'adops-check-jobs-'));
  for (const f of ['daily_zone.yaml', 'daily_campaign.yaml']) copyFileSync(join('jobs', f), join(jobsDir, f));
  env = { ...h.env, ADOPS_JOBS_DIR: jobsDir };
});
afterEach(async () => {
  await h.close();
  rmSync(jobsDir, { recursive: true, force: true });
});

async function adops(...args: string[]) {
  return runCliProcess(args, env);
}

describe('adops status --check', () => {
  it('exits 1 naming the one late report, and 0 after heal and a worker caught up', async () => {
    const { from, to } = lastDays(3);
    await h.worker();
    // daily_campaign is complete; daily_zone has only the oldest of the three days.
    const loaded = await adops(
      'backfill',
      '--report',
      'daily_campaign',
      '--from',
      from,
      '--to',
      to,
      '--wait',
    );
    expect(loaded.code).toBe(0);
    const old = await adops('backfill', '--report', 'daily_zone', '--from', from, '--to', from, '--wait');
    expect(old.code).toBe(0);

    const late = await adops('status', '--check', '--days', '3');
    expect(late.stdout).toMatch(
      new RegExp(
        `^daily_zone: late: newest loaded period ${from} ended \\d+(\\.\\d)?h ago \\(freshness 48h\\)$`,
        'm',
      ),
    );
    expect(late.stdout).not.toContain('daily_campaign');
    expect(late.stderr).toMatch(/^adops: 1 problem\(s\) in 1 report\(s\): daily_zone; `adops heal`/m);
    expect(late.code).toBe(1);

    const heal = await adops('heal', '--days', '3', '--wait');
    expect(heal.code).toBe(0);
    const fresh = await adops('status', '--check', '--days', '3');
    expect([fresh.code, fresh.stdout]).toEqual([
      0,
      'ok: 2 reports fresh and complete over the last 3 days\n',
    ]);
  });

  it(
    'names each failed period and each overdue hole, and honours a declared freshness',
    { timeout: 150_000 },
    async () => {
      // The newest period loaded is yesterday, whose data ends at 00:00 UTC today: a freshness of one
      // minute makes it late at any hour but the day's first minute, which the test waits out.
      await clearOfMidnight(60_000, 65_000);
      writeFileSync(
        join(jobsDir, 'daily_campaign.yaml'),
        `${'name: daily_campaign'}
dimensions: [day, campaign_id]
period: day
lookback_days: 3
freshness: 1m
schedule: { cron: '0 3 * * *', timezone: 'UTC' }
`,
      );
      const { from, to } = lastDays(5);
      const hole = lastDays(3).from;
      const failed = lastDays(4).from;
      await h.worker();
      const backfill = (report: string, a: string, b: string) =>
        adops('backfill', '--report', report, '--from', a, '--to', b, '--wait');
      expect((await backfill('daily_campaign', from, to)).code).toBe(0);
      // daily_zone: a hole behind loaded data, and a period whose last attempt failed.
      expect((await backfill('daily_zone', from, failed)).code).toBe(0);
      expect((await backfill('daily_zone', lastDays(2).from, to)).code).toBe(0);
      await h.db.pool.query(
        `UPDATE adops.report_loads SET status = 'failed', error = 'ApiHttpError: HTTP 401\nsecond line'
        WHERE report = 'daily_zone' AND period_start = $1`,
        [failed],
      );
      const r = await adops('status', '--check', '--days', '5');
      expect(r.code).toBe(1);
      expect(
        r.stdout
          .split('\n')
          .filter((l) => l !== '')
          .sort(),
      ).toEqual(
        [
          `daily_zone ${hole}: missing`,
          `daily_zone ${failed}: failed: ApiHttpError: HTTP 401`,
          expect.stringMatching(/^daily_campaign: late: newest loaded period .* \(freshness 1m\)$/),
        ].sort(),
      );
    },
  );

  it('never looks before start_date: a new account with 3 days loaded passes --check, heal and backfill start there', async () => {
    const { from, to } = lastDays(3);
    const earlier = addDays(from, -10);
    // The report starts 10 days back; the account 3 days back: the later one wins.
    writeFileSync(
      join(jobsDir, 'daily_zone.yaml'),
      `${readFileSync(join('jobs', 'daily_zone.yaml'), 'utf8')}start_date: ${earlier}\n`,
    );
    const accounts = join(jobsDir, 'accounts.yml.txt');
    writeFileSync(
      accounts,
      `- { name: default, base_url: "${h.emulator.url}", api_key_env: KEY, start_date: ${from} }\n`,
    );
    const withStart = { ...env, ADOPS_ACCOUNTS_FILE: accounts, KEY: 'demo-key' };
    await h.worker();
    const loaded = await runCli(['backfill', '--all', '--from', from, '--to', to, '--wait'], withStart);
    expect(loaded.code).toBe(0);

    const check = await runCli(['status', '--check', '--days', '30'], withStart);
    expect([check.code, check.stdout]).toEqual([
      0,
      'ok: 2 reports fresh and complete over the last 30 days\n',
    ]);
    const heal = await runCli(['heal', '--days', '30', '--dry-run'], withStart);
    expect([heal.code, heal.stdout]).toEqual([0, '0 pulls would heal the last 30 days\n']);

    // An account that starts tomorrow is neither late nor missing anything yet; its grid is blank.
    writeFileSync(
      accounts,
      `- { name: default, base_url: "${h.emulator.url}", api_key_env: KEY, start_date: ${addDays(to, 2)} }\n`,
    );
    const early = await runCli(['status', '--check', '--days', '30'], withStart);
    expect([early.code, early.stdout]).toEqual([
      0,
      'ok: 2 reports fresh and complete over the last 30 days\n',
    ]);
    expect((await runCli(['status', '--days', '5'], withStart)).stdout).toContain(
      '(blank) before start_date',
    );
    writeFileSync(
      accounts,
      `- { name: default, base_url: "${h.emulator.url}", api_key_env: KEY, start_date: ${from} }\n`,
    );

    // A backfill from before it starts at start_date, saying so once per report.
    const dry = await runCli(['backfill', '--all', '--from', earlier, '--to', to, '--dry-run'], withStart);
    expect(dry.code).toBe(0);
    expect(
      dry.stdout
        .split('\n')
        .filter((l) => l.includes(': GET '))
        .map((l) => l.split(': ')[0])
        .sort(),
    ).toEqual([`daily_campaign ${from}..${to}`, `daily_zone ${from}..${to}`]);
    expect(
      dry.stderr
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual([
      `note: daily_campaign starts at ${from} (start_date): --from ${earlier} clamped to it`,
      `note: daily_zone starts at ${from} (start_date): --from ${earlier} clamped to it`,
    ]);
  });

  it('fails when the queues cannot be read, and when a definition matches no table, a line each', async () => {
    const { from, to } = lastDays(1);
    await h.worker();
    // In this process (runCli): the steps before the checks need no binary of their own.
    const backfill = await runCli(['backfill', '--all', '--from', from, '--to', to, '--wait'], env);
    expect(backfill.code).toBe(0);
    expect((await runCli(['status', '--check', '--days', '1'], env)).code).toBe(0);

    // Redis gone: nothing can be queued or loaded, so all is not well however fresh the tables are.
    const dead = await runCli(['status', '--check', '--days', '1'], {
      ...env,
      ADOPS_QUEUE: 'redis',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(dead.code).toBe(1);
    expect(dead.stdout).toMatch(/^queues: cannot be read \(.+\): nothing can be queued or loaded$/m);
    expect(dead.stdout).not.toMatch(/^ok:/m);

    // A definition whose dimensions changed, not migrated: its loads on record look fresh, but no
    // pull of it can load.
    writeFileSync(
      join(jobsDir, 'daily_zone.yaml'),
      'name: daily_zone\ndimensions: [day, zone_id, country]\nschedule: { cron: "0 3 * * *", timezone: UTC }\n',
    );
    const changed = await runCli(['status', '--check', '--days', '1'], env);
    expect([changed.code, changed.stdout]).toEqual([
      1,
      'daily_zone: no table has its dimensions (day, zone_id, country): run `adops migrate`\n',
    ]);
    // A new definition, not migrated, is named for the same reason.
    writeFileSync(
      join(jobsDir, 'daily_country.yaml'),
      'name: daily_country\ndimensions: [day, country]\nschedule: { cron: "0 3 * * *", timezone: UTC }\n',
    );
    const unmigrated = await runCli(['status', '--check', '--days', '1'], env);
    expect(unmigrated.code).toBe(1);
    const lines = unmigrated.stdout.split('\n');
    expect(lines).toContain(
      'daily_zone: no table has its dimensions (day, zone_id, country): run `adops migrate`',
    );
    expect(lines).toContain('daily_country: no table has its dimensions (day, country): run `adops migrate`');
    expect(unmigrated.stdout).not.toContain('daily_campaign');
  }, 120_000);

  it('exits 2 on bad usage: --check with --json, a bad --days, a bad freshness', async () => {
    const both = await adops('status', '--check', '--json');
    expect([both.code, both.stderr]).toEqual([
      2,
      expect.stringContaining('--check and --json cannot be combined'),
    ]);
    expect((await adops('status', '--check', '--days', '0')).code).toBe(2);
    writeFileSync(
      join(jobsDir, 'daily_zone.yaml'),
      'name: daily_zone\ndimensions: [day, zone_id]\nfreshness: soon\n',
    );
    const bad = await adops('status', '--check');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/daily_zone\.yaml: freshness: "soon" is not a duration/);
  });
});
