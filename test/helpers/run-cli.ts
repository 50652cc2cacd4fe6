// Runs the CLI in-process with captured streams, or as a child process (bin/adops.js) to its end.
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { spawnCli, type SpawnOptions } from './cli.js';

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

/** `adops <args>` as a child process (the built CLI), run to its end; see cli.ts for live control. */
export async function runCliProcess(
  args: readonly string[],
  env: Record<string, string>,
  options: SpawnOptions = {},
): Promise<CliRun> {
  const cli = spawnCli(args, env, options);
  const code = await cli.exited;
  return { code: typeof code === 'number' ? code : -1, stdout: cli.stdout(), stderr: cli.stderr() };
}
