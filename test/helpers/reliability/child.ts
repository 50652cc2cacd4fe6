// Spawning and killing worker processes for the crash cases, and waiting on what they print.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./worker-child.ts', import.meta.url));

export interface WorkerChild {
  readonly process: ChildProcess;
  /** Every stderr line (the worker's log) so far. */
  readonly logLines: string[];
  /** Resolves with the first stdout line matching `pattern` (rejects on exit or after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

/** Starts worker-child.ts with `env` (merged over this process' PATH and HOME only). */
export function spawnWorker(env: Record<string, string>): WorkerChild {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logLines: string[] = [];
  const outLines: string[] = [];
  const waiters: Array<() => void> = [];
  const splitter = (into: string[], notify: boolean) => {
    let rest = '';
    return (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      into.push(...parts.filter((l) => l !== ''));
      if (notify) for (const w of waiters.splice(0)) w();
    };
  };
  child.stdout?.on('data', splitter(outLines, true));
  child.stderr?.on('data', splitter(logLines, false));
  let exited = false;
  child.on('exit', () => {
    exited = true;
    for (const w of waiters.splice(0)) w();
  });
  return {
    process: child,
    logLines,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `worker printed no ${pattern} in ${timeoutMs} ms; its log:\n${logLines.slice(-20).join('\n')}`,
              ),
            ),
          timeoutMs,
        );
        const check = () => {
          const hit = outLines.find((l) => pattern.test(l));
          if (hit !== undefined) {
            clearTimeout(timer);
            resolve(hit);
          } else if (exited) {
            clearTimeout(timer);
            reject(
              new Error(
                `worker exited before printing ${pattern}; its log:\n${logLines.slice(-20).join('\n')}`,
              ),
            );
          } else waiters.push(check);
        };
        check();
      }),
    kill: async () => {
      if (exited || child.exitCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/** Polls `probe` every `everyMs` until it returns a value, or throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
