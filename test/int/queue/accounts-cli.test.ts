// --account on the commands, with an accounts file of two accounts: backfill and heal plan every
// account (or the one named), status groups by account, pull and sync --direct need one named,
// and a bad name or an inline key stops the command with exit 2.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { runCli } from '../../helpers/run-cli.js';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';
import { pulled } from '../warehouse/fixtures/reports.js';

const dir = mkdtempSync(join(tmpdir(), 'adops-accounts-cli-'));
const accountsFile = join(dir, 'accounts.yaml');
writeFileSync(
  accountsFile,
  [
    '- { name: north, base_url: "http://127.0.0.1:1/v2", api_key_env: NORTH_KEY }',
    '- { name: south, base_url: "http://127.0.0.1:1/v2", api_key_env: SOUTH_KEY, reports: [daily_campaign] }',
  ].join('\n'),
);

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase();
  db.pool.on('error', () => undefined);
  env = {
    DATABASE_URL: db.url,
    // Nothing listens there: commands that need Redis fail at once; --dry-run and status need none.
    REDIS_URL: 'redis://127.0.0.1:1',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_ACCOUNTS_FILE: accountsFile,
    NORTH_KEY: 'north-secret-key',
    SOUTH_KEY: 'south-secret-key',
    LOG_LEVEL: 'silent',
  };
});
afterAll(async () => {
  await db?.drop();
});

describe('--account', () => {
  it('backfill --dry-run plans every account, each with the reports it runs, or only the one named', async () => {
    const args = ['backfill', '--all', '--from', '2026-01-05', '--to', '2026-01-05', '--dry-run'];
    const all = await runCli(args, env);
    expect(all.code).toBe(0);
    // Each line is a pull and the request it would make, to its own account's base_url.
    const lines = all.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(': GET http://127.0.0.1:1/v2/reports?')[0] ?? l);
    expect(lines).toContain('north/daily_campaign 2026-01-05');
    expect(lines).toContain('south/daily_campaign 2026-01-05');
    expect(lines).toContain('north/hourly 2026-01-05');
    // south runs daily_campaign only.
    expect(lines.filter((l) => l.startsWith('south/'))).toEqual(['south/daily_campaign 2026-01-05']);

    const south = await runCli([...args, '--account', 'south'], env);
    expect(south.stdout.trim().split('\n').slice(0, -1)).toEqual([
      'south/daily_campaign 2026-01-05: GET http://127.0.0.1:1/v2/reports?' +
        'date_from=2026-01-05&date_until=2026-01-05&dimensions=day&dimensions=campaign_id',
    ]);

    const unknown = await runCli([...args, '--account', 'east'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--account east: no such account; configured: north, south');
  });

  it("heal --dry-run reads each account's own loads; status groups the reports by account", async () => {
    const report = loadJobs('jobs').reports.find((r) => r.name === 'daily_campaign')!;
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const period = { start: yesterday, end: yesterday };
    await loadPulledPeriod(
      db.pool,
      TEST_SCHEMA,
      pulled(
        report,
        period,
        [
          [
            [yesterday, '7'],
            [1, 1, 1, 1, 1],
          ],
        ],
        new Date(),
        { account: 'north' },
      ),
    );
    const heal = await runCli(['heal', '--days', '1', '--dry-run'], env);
    expect(heal.code).toBe(0);
    const planned = heal.stdout.trim().split('\n');
    // north's daily_campaign of yesterday is loaded; south's is not.
    expect(planned).not.toContain(`north/daily_campaign ${yesterday}`);
    expect(planned).toContain(`south/daily_campaign ${yesterday}`);

    const status = await runCli(['status', '--days', '1'], env);
    expect(status.stdout).toMatch(
      /account north:\n\s+daily_campaign\s+\S+\s+1\/1[\s\S]*account south:\n\s+daily_campaign\s+-\s+0\/1/,
    );
    const check = await runCli(['status', '--days', '1', '--check'], env);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('south/daily_campaign: late: nothing loaded in the window');
    const json = await runCli(['status', '--days', '1', '--json', '--account', 'south'], env);
    const parsed = JSON.parse(json.stdout) as { reports: Array<{ account: string; report: string }> };
    expect(parsed.reports.map((r) => `${r.account}/${r.report}`)).toEqual(['south/daily_campaign']);
  });

  it('pull and sync --direct ask which account when there are several; the keys never show', async () => {
    for (const args of [
      ['pull', '--dimensions', 'day', '--from', '2026-01-01'],
      ['sync', '--direct'],
    ]) {
      const r = await runCli(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('2 accounts are configured (north, south): say which with --account NAME');
      expect(r.stderr + r.stdout).not.toContain('secret-key');
    }
  });

  it('stops every command on an accounts file with an inline key, naming the file and the account', async () => {
    const bad = join(dir, 'inline.yaml');
    writeFileSync(bad, '- { name: west, base_url: "http://127.0.0.1:1/v2", api_key: "inline-secret" }\n');
    const r = await runCli(['status'], { ...env, ADOPS_ACCOUNTS_FILE: bad });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${bad}: account "west": api_key: an API key is never written into the accounts file`,
    );
    expect(r.stderr).not.toContain('inline-secret');
  });
});
