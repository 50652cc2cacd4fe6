// A YAML syntax error in the accounts file or a job file is reported by file, line, column and
// what is wrong, and never with the file's text: the line at fault is often the one holding a key
// someone pasted in (`api_key: "sk-...` with its quote left open), and the YAML library's own
// message quotes that line (its source excerpt), or a piece of it in its first line (a block scalar
// header, an escape, an alias name). Its warnings (an unknown tag) went to stderr the same way.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';
import { parseJob } from '../../../src/platform/config/jobs.js';

const SECRET = 'sk-live-0123456789abcdef';
/** Pieces of the secret that must not show either (a cut excerpt would still give most of it). */
const PIECES = [SECRET, 'sk-live', '0123456789', 'abcdef'];

const dir = mkdtempSync(join(tmpdir(), 'adops-yaml-errors-'));
let n = 0;

/** The accounts file `text` as loadConfig reads it; returns the ConfigError it throws. */
function accountsError(text: string): { error: ConfigError; path: string } {
  const path = join(dir, `accounts-${n++}.yaml`);
  writeFileSync(path, text);
  try {
    loadConfig({ ADOPS_ACCOUNTS_FILE: path, K: 'k' });
  } catch (error) {
    if (error instanceof ConfigError) return { error, path };
    throw error;
  }
  throw new Error('expected a ConfigError');
}

function jobError(text: string): ConfigError {
  try {
    parseJob(text, 'jobs/x.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** Every message of the error and its causes, and their stacks: all a log line could show. */
function everything(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    parts.push(String((e as Error).message), String((e as Error).stack));
    if (!(e instanceof Error)) break;
  }
  return parts.join('\n');
}

function expectNoContent(error: ConfigError): void {
  const text = everything(error);
  for (const piece of PIECES) expect(text).not.toContain(piece);
  expect(error.message.split('\n')).toHaveLength(1);
}

// Each a line that breaks the YAML with the secret in it; the error must say where and what.
const BAD_LINES: readonly (readonly [string, string])[] = [
  ['a quote left open', `note: "${SECRET}`],
  ['a block scalar header with text after it', `note: |${SECRET}`],
  ['a bad escape in a double-quoted string', `note: "\\u${SECRET}"`],
  ['": " inside a plain value', `note: ${SECRET}: x`],
  ['a tab as indentation', `\tnote: ${SECRET}`],
  ['a value starting with a reserved character', `note: @${SECRET}`],
  ['an alias of no anchor', `note: *${SECRET}`],
];

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('a YAML syntax error in the accounts file', () => {
  it('names the file, line and column and what is wrong', () => {
    const { error, path } = accountsError(
      `accounts:\n  - name: north\n    base_url: http://n.example/v2\n    api_key: "${SECRET}\n`,
    );
    expect(error.message).toBe(
      `ADOPS_ACCOUNTS_FILE=${path}: not valid YAML at line 5, column 1: ` +
        'a closing quote, ] or } is missing, or a , or : between items',
    );
    expectNoContent(error);
  });

  it.each(BAD_LINES)('never echoes the file: %s', (_label, line) => {
    const { error, path } = accountsError(
      `- name: north\n  base_url: http://n.example/v2\n  api_key_env: K\n  ${line}\n`,
    );
    expect(error.message.startsWith(`ADOPS_ACCOUNTS_FILE=${path}: not valid YAML`)).toBe(true);
    expect(error.message).toMatch(/^[^:]+: not valid YAML( at line \d+, column \d+)?: [a-z]/);
    expectNoContent(error);
  });
});

describe('a YAML syntax error in a job file', () => {
  it('names the file, line and column and what is wrong', () => {
    const error = jobError(`name: x\ndimensions: [day]\ndescription: |${SECRET}\n  text\n`);
    expect(error.message).toBe(
      'jobs/x.yaml: not valid YAML at line 3, column 15: ' +
        'a block scalar header (| or >) has text after it; start the text on the next line',
    );
    expectNoContent(error);
  });

  it.each(BAD_LINES)('never echoes the file: %s', (_label, line) => {
    const error = jobError(`name: x\ndimensions: [day]\n${line}\n`);
    expect(error.message).toMatch(/^jobs\/x\.yaml: not valid YAML( at line \d+, column \d+)?: [a-z]/);
    expectNoContent(error);
  });
});

describe('a YAML warning', () => {
  it('is not printed with the line it is about (an unknown tag), for either file', async () => {
    process.on('warning', onWarning);
    const job = jobError(`name: x\ndimensions: [day]\nnote: !${SECRET} x\n`);
    expect(job.message).toMatch(/note: unknown field/);
    const { error } = accountsError(
      `- name: north\n  base_url: http://n.example/v2\n  api_key_env: K\n  note: !${SECRET} x\n`,
    );
    expect(error.message).toMatch(/account "north": note: unknown field/);
    // process.emitWarning emits on the next tick: let it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => `${w.message}\n${w.stack}`).join('\n')).not.toContain('sk-live');
  });
});
