// ADOPS_API_KEY_FILE is read only when it is a small regular file: a mistaken path to a huge file,
// /dev/zero or a FIFO must be refused at once, not read into memory or waited on.
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';

const dir = mkdtempSync(join(tmpdir(), 'adops-keyfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(file: string): ConfigError {
  try {
    loadConfig({ ADOPS_API_KEY_FILE: file });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`${file} was accepted`);
}

describe('ADOPS_API_KEY_FILE limits', () => {
  it('refuses a 3 GB file by its size without reading it', () => {
    const file = join(dir, 'huge.key');
    const fd = openSync(file, 'w');
    ftruncateSync(fd, 3_000_000_000);
    closeSync(fd);
    const error = refusal(file);
    expect(error.subject).toBe('ADOPS_API_KEY_FILE');
    expect(error.message).toBe(
      `ADOPS_API_KEY_FILE=${file}: 3000000000 bytes is over the limit of 65536 bytes (64 KiB) for a file holding the key`,
    );
  });

  it('refuses /dev/zero instead of reading it until memory runs out', () => {
    // Added with the fix: before it, this read never ended, so no test could fail.
    expect(refusal('/dev/zero').message).toBe(
      'ADOPS_API_KEY_FILE=/dev/zero: not a regular file; expected a file holding the key',
    );
  });

  it('still reads a key file of normal size', () => {
    const file = join(dir, 'ok.key');
    writeFileSync(file, 'key-123\n');
    expect(loadConfig({ ADOPS_API_KEY_FILE: file }).apiKey).toBe('key-123');
  });
});
