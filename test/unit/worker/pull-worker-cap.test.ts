import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import { pullsPerSecondCap } from '../../../src/worker/pull-worker.js';

const dir = mkdtempSync(join(tmpdir(), 'adops-cap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { DATABASE_URL: 'postgres://root@127.0.0.1:5432/x', ADOPS_RATE_LIMIT: '10' };

describe('pullsPerSecondCap', () => {
  it('is ADOPS_RATE_LIMIT for the one env account', () => {
    const config = loadConfig({ ...base, ADOPS_BASE_URL: 'http://127.0.0.1:1/v2', ADOPS_API_KEY: 'k' });
    expect(pullsPerSecondCap(config)).toBe(10);
  });

  it('is the sum of the accounts rate limits, so accounts run side by side', () => {
    const file = join(dir, 'accounts.yaml');
    writeFileSync(
      file,
      ['a', 'b', 'c']
        .map((n) => `- { name: ${n}, base_url: 'http://127.0.0.1:1/v2', api_key_env: K, rate_limit: 50 }\n`)
        .join(''),
    );
    const config = loadConfig({ ...base, ADOPS_ACCOUNTS_FILE: file, K: 'key' });
    expect(pullsPerSecondCap(config)).toBe(150);
  });

  it('never goes below ADOPS_RATE_LIMIT', () => {
    const file = join(dir, 'slow.yaml');
    writeFileSync(file, `- { name: a, base_url: 'http://127.0.0.1:1/v2', api_key_env: K, rate_limit: 2 }\n`);
    expect(pullsPerSecondCap(loadConfig({ ...base, ADOPS_ACCOUNTS_FILE: file, K: 'key' }))).toBe(10);
  });
});
