// The dashboard over a Redis of its own that we stop and start: a Redis outage costs the page its
// data for a while, never the process, and closing does not hang on a dead Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { startDashboard } from '../../../src/cli/dashboard.js';

const servers: ChildProcess[] = [];
afterAll(async () => {
  for (const server of servers) {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await once(server, 'exit');
    }
  }
});

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A throwaway redis-server on `port`, resolved once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  servers.push(server);
  const lines = createInterface({ input: server.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => line.includes('Ready to accept connections') && resolve());
    server.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready`)));
  });
  return server;
}

async function stop(server: ChildProcess): Promise<void> {
  server.kill('SIGKILL');
  await once(server, 'exit');
}

async function queuesStatus(url: string): Promise<number> {
  return (await fetch(`${url}api/queues`)).status;
}

describe('adops dashboard through a Redis outage', () => {
  it('answers errors at once while Redis is down and shows the queues again when it is back', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const dashboard = await startDashboard({
      redis: { kind: 'single', url: `redis://127.0.0.1:${port}` },
      prefix: 'outage',
      port: 0,
      host: '127.0.0.1',
      readOnly: true,
    });
    try {
      expect(await queuesStatus(dashboard.url)).toBe(200);

      await stop(redis);
      const started = Date.now();
      expect(await queuesStatus(dashboard.url)).toBe(500);
      expect(Date.now() - started).toBeLessThan(2_000); // fail-fast, no request hanging on Redis

      redis = await startRedis(port);
      await expect.poll(() => queuesStatus(dashboard.url), { timeout: 15_000, interval: 200 }).toBe(200);

      await stop(redis);
      const closing = Date.now();
      await dashboard.close();
      expect(Date.now() - closing).toBeLessThan(5_000);
    } finally {
      await dashboard.close();
    }
  });
});
