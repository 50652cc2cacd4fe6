// Runs the real `adops` CLI in a child process (tsx, no build), for multi-process tests: several
// workers, SIGTERM and SIGKILL. The environment is passed explicitly, never inherited wholesale.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY =
  "import('./src/cli/main.ts').then(async (m) => { process.exitCode = await m.main(process.argv); })";

export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) once the process ended. */
  readonly exited: Promise<number | string>;
  /** Resolves when a line of stdout or stderr matches `pattern`; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends SIGKILL (if still running) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

/** How to start the process besides its arguments. */
export interface SpawnOptions {
  /** A command the node process runs under, e.g. `['faketime', '-f', '+60d']`. */
  readonly wrap?: readonly string[];
  /** More node flags, e.g. `['--import', '/path/to/preload.mjs']`. */
  readonly nodeArgs?: readonly string[];
}

/** Starts `adops <args>` with exactly `env` (plus PATH and HOME). */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string>,
  options: SpawnOptions = {},
): CliProcess {
  const command = [
    ...(options.wrap ?? []),
    process.execPath,
    '--import',
    'tsx',
    ...(options.nodeArgs ?? []),
    '-e',
    ENTRY,
    '--',
    'adops',
    ...args,
  ];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    notify();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
    notify();
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      resolve(code ?? signal ?? 'unknown');
      notify();
    }),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${pattern}; stderr:\n${err.slice(-3000)}`));
        }, timeoutMs);
        const check = () => {
          const line = `${out}\n${err}`.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(line);
          } else if (ended) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`process exited before ${pattern}; stderr:\n${err.slice(-3000)}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    async kill(signal = 'SIGKILL') {
      if (!ended) child.kill(signal);
      return exited;
    },
  };
}
