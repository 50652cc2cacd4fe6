// `adops doctor` with an accounts file: each account is probed with its own URL and key, under its
// own heading, and one broken account fails the command naming it; --account probes one.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli } from '../../helpers/run-cli.js';
import { closeEmulators, emulatorWith } from './helpers.js';

afterEach(closeEmulators);

it('probes every account under its name, fails naming the broken one, and probes one with --account', async () => {
  const good = await emulatorWith();
  const other = await emulatorWith({ seed: 4 });
  const dir = mkdtempSync(join(tmpdir(), 'adops-doctor-accounts-'));
  const file = join(dir, 'accounts.yaml');
  writeFileSync(
    file,
    [
      `- { name: north, base_url: "${good.url}", api_key_env: GOOD_KEY }`,
      `- { name: south, base_url: "${other.url}", api_key_env: BAD_KEY }`,
    ].join('\n'),
  );
  const env = { ADOPS_ACCOUNTS_FILE: file, GOOD_KEY: 'demo-key', BAD_KEY: 'not-a-key-of-it' };
  const all = await runCli(['doctor'], env);
  expect(all.stdout).toMatch(/^account north:\n[\s\S]*\naccount south:\n/);
  expect(all.code).toBe(1);
  expect(all.stderr).toMatch(/doctor: a pull cannot work: account south: /);
  expect(all.stderr).not.toMatch(/account north: /);
  expect(all.stdout + all.stderr).not.toContain('not-a-key-of-it');

  const north = await runCli(['doctor', '--account', 'north'], env);
  expect(north.code).toBe(0);
  expect(north.stdout).toMatch(/^account north:\n/);
  expect(north.stdout).not.toContain('account south:');
});

it('prints the accounts-file lines for the account --account names, and pasted in they make its pulls work', async () => {
  const php = await emulatorWith({ profile: 'php' });
  const plain = await emulatorWith({ seed: 4 });
  const dir = mkdtempSync(join(tmpdir(), 'adops-doctor-paste-'));
  const file = join(dir, 'accounts.yaml');
  const write = (pasted: string) =>
    writeFileSync(
      file,
      [
        'accounts:',
        '  - name: php',
        `    base_url: "${php.url}"`,
        '    api_key_env: DEMO_KEY',
        ...(pasted === '' ? [] : [pasted]),
        '  - name: plain',
        `    base_url: "${plain.url}"`,
        '    api_key_env: DEMO_KEY',
        '',
      ].join('\n'),
    );
  write('');
  const env = { ADOPS_ACCOUNTS_FILE: file, DEMO_KEY: 'demo-key' };
  const pull = ['pull', '--account', 'php', '--dimensions', 'day,campaign_id', '--from', '2026-01-05'];
  // On the defaults (Bearer, repeated dimensions=) the PHP-style server refuses the key.
  expect((await runCli(pull, env)).code).toBe(1);

  const run = await runCli(['doctor', '--account', 'php'], env);
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.split('\n');
  const at = lines.indexOf(`Set these in account php of ${file}:`);
  expect(at, run.stdout).toBeGreaterThan(0);
  const pasted = lines.slice(at + 1, at + 4);
  expect(pasted).toEqual(['    auth: x-api-key', '    report_params: brackets', '    compression: none']);
  expect(lines[at + 4]).toBe('');
  // No variable lines: they would set every account's default, not this account's.
  expect(run.stdout).not.toMatch(/^ADOPS_/m);

  const json = await runCli(['doctor', '--account', 'php', '--json'], env);
  expect(JSON.parse(json.stdout)).toMatchObject({
    ok: true,
    account: 'php',
    accountSettings: { auth: 'x-api-key', report_params: 'brackets', compression: 'none' },
  });

  write(pasted.join('\n'));
  const after = await runCli([...pull, '--format', 'json'], env);
  expect(after.code, after.stderr).toBe(0);
  expect(JSON.parse(after.stdout)).toEqual(
    expect.arrayContaining([expect.objectContaining({ day: '2026-01-05' })]),
  );
});
