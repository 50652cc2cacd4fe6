// Real `adops worker` processes (bin/adops.js, the compiled CLI) for the backfill bench.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { onInterrupt } from '../cleanup.js';

export interface WorkerProcesses {
  readonly pids: readonly number[];
  /** The last stderr lines of each worker, for a failure message. */
  readonly tails: string[][];
  /** Counts of log messages seen (e.g. 'pull loaded'), over all workers. */
  readonly messages: Map<string, number>;
  /** SIGTERM, then wait for a graceful exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

const BIN = fileURLToPath(new URL('../../../bin/adops.js', import.meta.url));

/**
 * Starts `count` workers with `env` (nothing else inherited) and resolves once `connected()` says
 * all of them consume: on Redis BullMQ's own count of connected workers (at any log level); on
 * Postgres, whose workers' LISTEN connections go unnamed (src/platform/queue/backend.ts) and so uncounted,
 * the workers' `worker started` lines, which `connected` is handed counted by message.
 */
export async function startWorkers(
  count: number,
  concurrency: number,
  env: Readonly<Record<string, string>>,
  connected: (logged: ReadonlyMap<string, number>) => Promise<number>,
  nodeArgs: readonly string[] = [],
  timeoutMs = 30_000,
): Promise<WorkerProcesses> {
  const children: ChildProcess[] = [];
  const forget: (() => void)[] = [];
  const tails: string[][] = [];
  const messages = new Map<string, number>();
  const exits: Promise<never>[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(
      process.execPath,
      [...nodeArgs, BIN, 'worker', '--concurrency', String(concurrency), '--metrics-port', '0'],
      {
        env: { ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.push(child);
    // Registered at once: an interrupt while the workers still start must not orphan them.
    forget.push(onInterrupt(() => stopChild(child, 2_000)));
    const tail: string[] = [];
    tails.push(tail);
    let buffered = '';
    const exit = new Promise<never>((_, reject) => {
      child.once('exit', (code) =>
        reject(new Error(`worker ${i} exited (${code}) before it started:\n${tail.join('\n')}`)),
      );
    });
    // Only the start races with an exit; a later exit (our own stop) is no error.
    exit.catch(() => undefined);
    exits.push(exit);
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      buffered += text;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        const msg = messageOf(line);
        if (msg === undefined) continue;
        messages.set(msg, (messages.get(msg) ?? 0) + 1);
      }
    });
  }
  const stop = async (graceMs = 15_000) => {
    await Promise.all(children.map((child) => stopChild(child, graceMs)));
    for (const f of forget) f();
  };
  let gaveUp = false;
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`workers did not start within ${timeoutMs} ms`)), timeoutMs).unref(),
  );
  try {
    await Promise.race([
      allConnected(
        () => connected(messages),
        count,
        () => gaveUp,
      ),
      ...exits,
      timeout,
    ]);
  } catch (error) {
    gaveUp = true;
    await stop(2_000);
    throw error;
  }
  return { pids: children.map((c) => c.pid ?? 0), tails, messages, stop };
}

/** SIGTERM (a graceful drain), SIGKILL after `graceMs`; resolves once the process is gone. */
async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Resolves once `connected()` reaches `count` (checked every 50 ms: there is no event to wait on). */
async function allConnected(
  connected: () => Promise<number>,
  count: number,
  gaveUp: () => boolean,
): Promise<void> {
  while (!gaveUp() && (await connected()) < count) await new Promise((r) => setTimeout(r, 50));
}

/** The `msg` of a pino JSON line, or undefined. */
function messageOf(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const msg = (JSON.parse(line) as { msg?: unknown }).msg;
    return typeof msg === 'string' ? msg : undefined;
  } catch {
    return undefined;
  }
}
