// Runs the real `adops` CLI in a child process, for multi-process tests: several workers, SIGTERM and
// SIGKILL. The environment is passed explicitly, never inherited wholesale.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** ADOPS_TEST_CLI=source runs the CLI from src/ through tsx (no build needed, ~1 s more per start). */
const FROM_SOURCE = process.env.ADOPS_TEST_CLI === 'source';
const SOURCE_ENTRY = `import(${JSON.stringify(new URL('../../src/cli/main.ts', import.meta.url).href)}).then(async (m) => { process.exitCode = await m.main(process.argv); })`;

let checked = false;

/**
 * Throws unless every src/ file is compiled in dist/ and not older than its source: the children run
 * bin/adops.js (dist/, as users do, and without compiling TypeScript in every child), so a stale
 * dist/ would test old code. `npm test` builds first; alone, run `npm run build` (or ADOPS_TEST_CLI=source).
 */
export function assertBuildFresh(): void {
  if (checked || FROM_SOURCE) return;
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const built = join(ROOT, 'dist', relative(ROOT, path).replace(/\.ts$/, '.js'));
        let builtAt: number;
        try {
          builtAt = statSync(built).mtimeMs;
        } catch {
          builtAt = -1;
        }
        if (builtAt < statSync(path).mtimeMs) stale.push(relative(ROOT, path));
      }
    }
  };
  walk(join(ROOT, 'src'));
  if (stale.length > 0)
    throw new Error(
      `dist/ is stale (${stale.length} files of src/ newer or missing, e.g. ${stale.slice(0, 3).join(', ')}): ` +
        'run `npm run build`, or set ADOPS_TEST_CLI=source to run the CLI from src/ through tsx',
    );
  checked = true;
}

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

/** The node arguments that start `adops`: bin/adops.js, once dist/ is known fresh. */
export function cliEntry(): string[] {
  assertBuildFresh();
  return FROM_SOURCE
    ? ['--import', 'tsx', '-e', SOURCE_ENTRY, '--', 'adops']
    : [join(ROOT, 'bin', 'adops.js')];
}

/** Starts `adops <args>` with exactly `env` (plus PATH and HOME). */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string>,
  options: SpawnOptions = {},
): CliProcess {
  assertBuildFresh();
  const entry = FROM_SOURCE
    ? ['--import', 'tsx', '-e', SOURCE_ENTRY, '--', 'adops']
    : [join(ROOT, 'bin', 'adops.js')];
  const command = [...(options.wrap ?? []), process.execPath, ...(options.nodeArgs ?? []), ...entry, ...args];
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
