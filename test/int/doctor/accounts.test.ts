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
