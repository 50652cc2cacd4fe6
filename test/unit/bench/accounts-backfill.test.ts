import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_REPORTS,
  accountReportName,
  accountReportYaml,
  accountsBound,
  accountsYaml,
  countRows,
} from '../../../bench/scale/accounts-backfill.js';
import { readAccountsFile } from '../../../src/platform/config/accounts.js';
import { loadConfig, serverDefaults } from '../../../src/platform/config/env.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';

const dir = mkdtempSync(join(tmpdir(), 'adops-bench-accounts-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bench scale accounts backfill', () => {
  it('bounds the run by one account: its pulls over its rate, the accounts side by side', () => {
    expect(accountsBound(7_300, 50)).toBe(146_000);
    expect(accountsBound(600, 50)).toBe(12_000);
    expect(() => accountsBound(600, 0)).toThrow(/rate must be above 0/);
  });

  it('writes an accounts file the product reads: keys from variables, the rate per account', () => {
    const file = join(dir, 'accounts.yaml');
    writeFileSync(
      file,
      accountsYaml(
        [
          { name: 'acct_a', baseUrl: 'http://127.0.0.1:4001/v2', keyEnv: 'KEY_A' },
          { name: 'acct_b', baseUrl: 'http://127.0.0.1:4002/v2', keyEnv: 'KEY_B' },
        ],
        25,
      ),
    );
    const accounts = readAccountsFile(
      file,
      { KEY_A: 'a-key', KEY_B: 'b-key' },
      serverDefaults(loadConfig({ ADOPS_RATE_LIMIT: '10' })),
    );
    expect(accounts.map((a) => [a.name, a.baseUrl, a.apiKey, a.rateLimitPerSecond])).toEqual([
      ['acct_a', 'http://127.0.0.1:4001/v2', 'a-key', 25],
      ['acct_b', 'http://127.0.0.1:4002/v2', 'b-key', 25],
    ]);
  });

  it('defines 20 daily reports of one or two dimensions, all valid', () => {
    const jobsDir = join(dir, 'jobs');
    rmSync(jobsDir, { recursive: true, force: true });
    mkdirSync(jobsDir);
    for (let i = 0; i < ACCOUNT_REPORTS; i++)
      writeFileSync(join(jobsDir, `${accountReportName(i)}.yaml`), accountReportYaml(i));
    const reports = loadJobs(jobsDir).reports;
    expect(reports).toHaveLength(20);
    expect(reports.every((r) => r.period === 'day' && r.dimensions[0] === 'day')).toBe(true);
    expect(new Set(reports.map((r) => r.dimensions.length))).toEqual(new Set([1, 2]));
  });

  it('counts the rows of a report body: the leaves, one level per dimension deep', () => {
    const items = {
      '2025-01-01': { desktop: { impressions: 1 }, mobile: { impressions: 2 } },
      '2025-01-02': { tablet: { impressions: 3 } },
    };
    expect(countRows(items, 2)).toBe(3);
    expect(countRows(items, 1)).toBe(2);
    expect(countRows({}, 2)).toBe(0);
    expect(countRows(undefined, 1)).toBe(0);
  });
});
