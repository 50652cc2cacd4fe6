import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';

async function run(args: string[]): Promise<{ code: number; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await main(['node', 'adops', 'emulator', ...args], {}, stdout, stderr);
  return { code, err };
}

describe('adops emulator flags', () => {
  it.each([
    [['--fail-rate', '3'], '--fail-rate'],
    [['--latency-ms', '50-10'], '--latency-ms'],
    [['--port', 'http'], '--port'],
    [['--fail-rate', '0.6', '--drop-rate', '0.6'], 'add up to'],
    [['--keys', '/nonexistent/keys.json'], '--keys'],
    [['--profile', 'nasty'], 'faithful, php, hostile, strict'],
    [['--quirks', 'string-values,sorted'], 'unknown quirk "sorted"'],
    [['--report-params', 'pipes'], 'repeat, brackets, comma, json-body'],
    [['--auth-form', 'cookie'], 'bearer, x-api-key'],
    [['--totals', 'none'], 'missing, empty-array'],
    [['--unknown-fields', 'keep'], 'drop, reject'],
    [['--clock-skew', '1e9'], '--clock-skew'],
    [
      ['--profile', 'hostile', '--fail-rate', '0.95'],
      'fault rates of --profile hostile and the flags add up to',
    ],
  ])('exits 2 naming the problem for %j', async (args, message) => {
    const { code, err } = await run(args);
    expect(code).toBe(2);
    expect(err).toContain(message);
  });
});
