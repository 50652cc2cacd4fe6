import { createServer, type Server, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/platform/log/logger.js';
import { tryStartMetricsServer, type MetricsServer } from '../../../src/worker/health-server.js';

const healthy = async () => ({ ok: true });
const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

function capture() {
  const out = new PassThrough();
  const lines: string[] = [];
  out.on('data', (c: Buffer) =>
    lines.push(
      ...c
        .toString()
        .split('\n')
        .filter((l) => l !== ''),
    ),
  );
  return { logger: createLogger({ level: 'info', secrets: [], destination: out, pretty: false }), lines };
}

async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({ close: () => new Promise((r) => server.close(r)) });
  return { port: (server.address() as AddressInfo).port, server };
}

describe('tryStartMetricsServer', () => {
  it('serves /health on a free port of the loopback address', async () => {
    const { logger, lines } = capture();
    const server = (await tryStartMetricsServer(
      new Registry(),
      healthy,
      0,
      '127.0.0.1',
      logger,
    )) as MetricsServer;
    opened.push(server);
    const res = await fetch(`http://127.0.0.1:${server.port}/health`);
    expect(res.status).toBe(200);
    expect(lines).toEqual([]);
  });

  it('on a busy port resolves without a server and logs one warning naming the port and both settings', async () => {
    const { port } = await occupy();
    const { logger, lines } = capture();
    const server = await tryStartMetricsServer(new Registry(), healthy, port, '127.0.0.1', logger);
    expect(server).toBeUndefined();
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string; port: number };
    expect(line.level).toBe(40);
    expect(line.port).toBe(port);
    expect(line.msg).toContain(`127.0.0.1:${port}`);
    expect(line.msg).toContain('EADDRINUSE');
    expect(line.msg).toContain('ADOPS_METRICS_PORT');
    expect(line.msg).toContain('--metrics-port');
  });
});
