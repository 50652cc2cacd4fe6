// Runs bench/load/child.ts in its own Node process and returns its answer.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadChildRequest, LoadChildResult } from './child.js';

/** Forks the load child (optionally under --cpu-prof into `profileDir`) and waits for its result. */
export function runLoadChild(req: LoadChildRequest, profileDir?: string): Promise<LoadChildResult> {
  const script = fileURLToPath(new URL('./child.js', import.meta.url));
  const execArgv = [
    '--expose-gc',
    ...(profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir]),
  ];
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answer: { ok: true; result: LoadChildResult } | { ok: false; error: string } | undefined;
    child.once('message', (m) => {
      answer = m as typeof answer;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (answer?.ok === true) resolve(answer.result);
      else if (answer?.ok === false) reject(new Error(`load child failed: ${answer.error}`));
      else reject(new Error(`load child exited (code ${code}, signal ${signal}) without an answer`));
    });
    child.send(req);
  });
}
