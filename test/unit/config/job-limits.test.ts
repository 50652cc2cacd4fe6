// Job folders are bounded before anything is parsed: a job YAML of megabytes once took the process
// to 4.4 GB RSS (a 1 MB mapping of keys alone takes the YAML parser about a minute).
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/platform/config/files.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';

const job = (name: string) => `name: ${name}\ndimensions: [day]\nperiod: day\n`;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function jobsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'adops-limits-'));
  dirs.push(dir);
  return dir;
}

function refusal(dir: string): ConfigError {
  try {
    loadJobs(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain('\n');
    return error as ConfigError;
  }
  throw new Error('the job folder was accepted');
}

describe('job file limits', () => {
  it('refuses a job file over 64 KiB, naming the file, its size and the limit', () => {
    const dir = jobsDir();
    writeFileSync(join(dir, 'a.yaml'), job('small'));
    // Valid YAML, just long: the size alone is the reason.
    const text = `${job('big')}description: "${'x'.repeat(70_000)}"\n`;
    writeFileSync(join(dir, 'big.yaml'), text);
    const error = refusal(dir);
    expect(error.subject).toBe(join(dir, 'big.yaml'));
    expect(error.message).toBe(
      `${join(dir, 'big.yaml')}: ${Buffer.byteLength(text)} bytes is over the limit of 65536 bytes (64 KiB) for a job definition`,
    );
  });

  it('refuses a 3 GB file by its size, without reading it into memory', () => {
    const dir = jobsDir();
    // A sparse file: 3 GB long, no disk used. Reading it would need 3 GB of memory (or throw a
    // RangeError past Node's 2 GiB buffer limit); the refusal must come from its size alone.
    const fd = openSync(join(dir, 'huge.yaml'), 'w');
    ftruncateSync(fd, 3_000_000_000);
    closeSync(fd);
    const before = process.memoryUsage().rss;
    const error = refusal(dir);
    expect(error.message).toMatch(/huge\.yaml: 3000000000 bytes is over the limit of 65536 bytes/);
    expect(process.memoryUsage().rss - before).toBeLessThan(50_000_000);
  });

  it('refuses a FIFO or a device named like a job file instead of waiting on it for ever', () => {
    // Added with the fix: before it, reading the FIFO blocked the process, so no test could fail.
    const dir = jobsDir();
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    expect(refusal(dir).message).toBe(
      `${join(dir, 'pipe.yaml')}: not a regular file; expected a job definition`,
    );
    rmSync(join(dir, 'pipe.yaml'));
    symlinkSync('/dev/zero', join(dir, 'zero.yaml'));
    expect(refusal(dir).message).toBe(
      `${join(dir, 'zero.yaml')}: not a regular file; expected a job definition`,
    );
  });

  it('refuses more than 500 definitions before parsing any of them', () => {
    const dir = jobsDir();
    for (let i = 0; i < 501; i++)
      writeFileSync(join(dir, `r${String(i).padStart(3, '0')}.yaml`), job(`r${i}`));
    // A broken file among them: the count is checked first, so it is not what the message names.
    writeFileSync(join(dir, 'r000.yaml'), 'name: [broken');
    const error = refusal(dir);
    expect(error.subject).toBe('ADOPS_JOBS_DIR');
    expect(error.message).toBe(
      `ADOPS_JOBS_DIR=${dir} holds 501 job definitions (*.yaml, *.yml): at most 500 are allowed`,
    );
  });

  it('accepts exactly 500 definitions', () => {
    const dir = jobsDir();
    for (let i = 0; i < 500; i++) writeFileSync(join(dir, `r${i}.yaml`), job(`r${i}`));
    expect(loadJobs(dir).reports).toHaveLength(500);
  });
});
