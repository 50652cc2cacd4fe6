// A private redis-server for the restart case: the shared one serves every other test file, so
// only a server of our own may be killed and started again.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { until } from './child.js';

export interface PrivateRedis {
  readonly url: string;
  /** SIGKILLs the server: no save, every key is gone, as after a crash of a cache-only Redis. */
  crash(): Promise<void>;
  /** Starts it again on the same port, empty; resolves once it answers PING. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Starts `redis-server` on a free port with no persistence and BullMQ's required noeviction. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
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
  const kill = async () => {
    const p = proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const gone = once(p, 'exit');
    p.kill('SIGKILL');
    await gone;
  };
  await start();
  return { url, crash: kill, start, stop: kill };
}
