// `adops doctor` against the real emulator over HTTP: every profile and single quirks give the
// right "Set these:" lines; a wrong or restricted key exits 1 saying why; the key never shows.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProfileName } from '../../../src/emulator/index.js';
import { runCli } from '../../helpers/run-cli.js';
import { closeEmulators, doctorAgainst as doctor, emulatorWith, settings } from './helpers.js';

afterEach(closeEmulators);

const expected = (auth: string, params: string, compression = 'none') => ({
  ADOPS_AUTH: auth,
  ADOPS_REPORT_PARAMS: params,
  ADOPS_HTTP_COMPRESSION: compression,
});

describe('adops doctor against each emulator profile', () => {
  it.each<[ProfileName, ReturnType<typeof expected>]>([
    ['faithful', expected('bearer', 'repeat')],
    ['php', expected('x-api-key', 'brackets')],
    ['hostile', expected('x-api-key', 'brackets')],
    ['strict', expected('bearer', 'repeat')],
  ])('%s: exits 0 and prints the settings that work', async (profile, want) => {
    const run = await doctor({ profile });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(settings(run)).toEqual(want);
    expect(run.stdout).toContain('A pull can work.');
  });

  it('flags the one-level report a PHP server answers to repeated dimensions as wrong, not ok', async () => {
    const run = await doctor({ profile: 'php' });
    expect(run.stdout).toMatch(
      /report params repeat\s+│ no\s+│ wrong report: a one-level report by campaign_id/,
    );
  });
});

describe('adops doctor with single quirks', () => {
  it.each(['repeat', 'brackets', 'comma', 'json-body'] as const)(
    'reportParams %s: sets ADOPS_REPORT_PARAMS to the one form the server reads',
    async (form) => {
      const run = await doctor({ quirks: { reportParams: form } });
      expect(run.code).toBe(0);
      expect(settings(run).ADOPS_REPORT_PARAMS).toBe(form);
    },
  );

  it.each(['bearer', 'x-api-key'] as const)('auth %s: sets ADOPS_AUTH to the accepted form', async (form) => {
    const run = await doctor({ quirks: { auth: form } });
    expect(run.code).toBe(0);
    expect(settings(run).ADOPS_AUTH).toBe(form);
  });

  it('reportShape rows: reads flat rows as the report, and still catches the misread forms', async () => {
    const run = await doctor({ quirks: { reportShape: 'rows', reportParams: 'comma' } });
    expect(run.code).toBe(0);
    expect(settings(run).ADOPS_REPORT_PARAMS).toBe('comma');
    expect(run.stdout).toMatch(/report params repeat\s+│ no\s+│ wrong report/);
  });

  it('keeps the configured auth form when the server takes both', async () => {
    const run = await doctor({}, { ADOPS_AUTH: 'x-api-key' });
    expect(settings(run).ADOPS_AUTH).toBe('x-api-key');
  });
});

describe('adops doctor when a pull cannot work', () => {
  it('exits 1 and says the API refused the key with both header forms for a wrong key', async () => {
    const run = await doctor({}, { ADOPS_API_KEY: 'not-a-key-5150' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the API refused the key (401) with both header forms');
    expect(run.stdout).toContain('A pull cannot work:');
    expect(run.stdout).not.toContain('Set these:');
  });

  it('exits 1 naming the reports scope for a key restricted to the catalogue', async () => {
    const key = 'catalogue-only-key';
    const run = await doctor({ keys: [{ key, scopes: ['campaigns', 'creatives'] }] }, { ADOPS_API_KEY: key });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/GET \/reports answered 403 .*the key lacks the reports scope/);
    expect(run.stdout).toMatch(/scopes\s+│ fail\s+│ campaigns 200; creatives 200; reports 403/);
  });

  it('exits 2 when ADOPS_BASE_URL is missing, as every command', async () => {
    const run = await runCli(['doctor'], { ADOPS_API_KEY: 'demo-key' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('ADOPS_BASE_URL is missing');
  });
});

describe('adops doctor and the key', () => {
  it('never prints the key, even when the server echoes it (key from a file)', async () => {
    const canary = 'canary-4c0ffee-key';
    const dir = mkdtempSync(join(tmpdir(), 'adops-doctor-'));
    writeFileSync(join(dir, 'key'), `${canary}\n`);
    const emulator = await emulatorWith({ keys: [{ key: canary }] });
    const echo = JSON.stringify({ status: 401, error: 'unauthorized', message: `key ${canary} is unknown` });
    emulator.override({ path: '/v2/campaigns', status: 401, body: echo, times: 2 });
    const env = { ADOPS_BASE_URL: emulator.url, ADOPS_API_KEY_FILE: join(dir, 'key') };
    const text = await runCli(['doctor'], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('[REDACTED]');
    emulator.override({ path: '/v2/campaigns', status: 401, body: echo, times: 2 });
    const json = await runCli(['doctor', '--json'], env);
    for (const run of [text, json]) {
      expect(run.stdout + run.stderr).not.toContain(canary);
      expect(run.stdout + run.stderr).not.toContain(encodeURIComponent(canary));
    }
  });
});

describe('adops doctor and rate limits', () => {
  it('waits out 429s with Retry-After instead of reporting them as failures', async () => {
    const emulator = await emulatorWith();
    emulator.override({
      path: '/v2/reports',
      status: 429,
      body: JSON.stringify({ status: 429, error: 'rate_limited', message: 'slow down' }),
      headers: { 'retry-after': '1' },
      times: 2,
    });
    const run = await runCli(['doctor', '--json'], {
      ADOPS_BASE_URL: emulator.url,
      ADOPS_API_KEY: 'demo-key',
    });
    const doc = JSON.parse(run.stdout) as {
      ok: boolean;
      facts: { throttled: number; rateLimitHeaders: Record<string, string> };
    };
    expect(run.code).toBe(0);
    expect(doc.ok).toBe(true);
    expect(doc.facts.throttled).toBe(2);
    expect(doc.facts.rateLimitHeaders['retry-after']).toBe('1');
  });
});
