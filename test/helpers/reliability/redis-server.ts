// A private redis-server for the restart and outage cases: the shared one serves every other test
// file, so only a server of our own may be killed, stopped and started again.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { until } from './child.js';

export interface PrivateRedis {
  readonly url: string;
  /** The process id of the running server (undefined while it is down). */
  pid(): number | undefined;
  /** SIGKILLs the server: without persistence every key is gone, as after a crash of a cache-only Redis. */
  crash(): Promise<void>;
  /**
   * Stops the server as `redis-cli shutdown`, `systemctl stop` and `docker stop` do (SIGTERM):
   * with persistence it writes its data down first, and `start()` brings it back.
   */
  halt(): Promise<void>;
  /** Starts it again on the same port (with its data when persistent); resolves once it answers PING. */
  start(): Promise<void>;
  /** Kills it for good and removes its data folder. */
  stop(): Promise<void>;
}

export interface PrivateRedisOptions {
  /**
   * Keep the data across a halt and start: an append-only file written on every command, in a
   * temporary folder of its own (a server with no persistence comes back empty).
   */
  readonly persistent?: boolean;
  /** `requirepass`: clients then connect with redis://:password@... */
  readonly password?: string;
}

/** A TCP port nothing listens on right now, for a private server of a test's own. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Starts `redis-server` on a free port with BullMQ's required noeviction; no persistence unless asked. */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  const url = `redis://${auth}127.0.0.1:${port}`;
  const dir = options.persistent === true ? mkdtempSync(join(tmpdir(), 'adops-redis-')) : undefined;
  const persistence =
    dir === undefined
      ? ['--save', '', '--appendonly', 'no']
      : ['--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        ...persistence,
        ...(options.password === undefined ? [] : ['--requirepass', options.password]),
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    await until(
      `redis-server on port ${port}`,
      async () => {
        const probe = new Redis(url, {
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG' ? true : undefined;
        } catch {
          return undefined;
        } finally {
          probe.disconnect();
        }
      },
      10_000,
      50,
    );
  };
  const signal = async (name: NodeJS.Signals) => {
    const p = proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const gone = once(p, 'exit');
    p.kill(name);
    await gone;
  };
  await start();
  return {
    url,
    pid: () => (proc?.exitCode === null && proc.signalCode === null ? proc.pid : undefined),
    crash: () => signal('SIGKILL'),
    halt: () => signal('SIGTERM'),
    start,
    stop: async () => {
      await signal('SIGKILL');
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
