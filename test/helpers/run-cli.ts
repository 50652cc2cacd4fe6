// Runs the CLI in-process with captured streams, or as a child process from source.
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** `adops <args>` in this process, with exactly `env` as its environment. */
export async function runCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  const out = sink();
  const err = sink();
  const code = await main(['node', 'adops', ...args], env, out.stream, err.stream);
  return { code, stdout: out.text(), stderr: err.text() };
}

/** `adops <args>` as a child process (from source, via tsx), with `env` added to PATH and HOME. */
export function spawnCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/adops.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
