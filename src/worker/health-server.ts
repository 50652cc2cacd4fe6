// The worker's HTTP side: /metrics for Prometheus and /health for orchestrators.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { errnoCode } from '../platform/config/files.js';
import type { Logger } from '../platform/log/logger.js';

/** What /health reports; `ok` false answers 503. */
export interface Health {
  readonly ok: boolean;
  readonly [key: string]: unknown;
}

/** What the worker knows when asked for its health. */
export interface HealthFacts {
  readonly backend: 'redis' | 'postgres';
  /** The queue store's status, 'ready' when usable (on Redis, ioredis' connection status). */
  readonly store: string;
  readonly running: boolean;
  /** Pull queue counts; undefined when the queue's store could not be read. */
  readonly waiting: number | undefined;
  readonly active: number | undefined;
  readonly idleMs: number; // Time since this process last started, finished or found no job.
  readonly stuckAfterMs: number;
}

/** Health; a worker may stay connected but stop consuming (bullmq #4585): jobs waiting, none run: 503. */
export function assessHealth(f: HealthFacts): Health {
  const readable = f.waiting !== undefined && f.active !== undefined;
  const stuck = readable && (f.waiting ?? 0) > 0 && (f.active ?? 0) === 0 && f.idleMs > f.stuckAfterMs;
  const queueOk = f.store === 'ready' && readable;
  return {
    ok: queueOk && f.running && !stuck,
    queue: { backend: f.backend, ok: queueOk },
    ...(f.backend === 'redis' ? { redis: f.store } : {}),
    running: f.running,
    stuck,
    idleSeconds: Math.round(f.idleMs / 1000),
    waiting: f.waiting ?? null,
    active: f.active ?? null,
  };
}

/** Health before the queue's store answered: 503 with the last connection error (a probe gets an answer). */
export function startingHealth(backend: 'redis' | 'postgres', lastError: string | undefined): Health {
  return {
    ok: false,
    starting: true,
    queue: { backend, ok: false },
    ...(lastError === undefined ? {} : { error: lastError }),
  };
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves GET /metrics and GET /health (200 or 503) on `host:port` (0: a free port), once listening. */
export async function startMetricsServer(
  registry: Registry,
  health: () => Promise<Health>,
  port: number,
  host = '127.0.0.1',
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return reply(405, 'text/plain', 'method not allowed\n');
    const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
    if (path === '/metrics')
      void registry.metrics().then(
        (text) => reply(200, registry.contentType, text),
        (error: unknown) => reply(500, 'text/plain', `metrics failed: ${message(error)}\n`),
      );
    else if (path === '/health' || path === '/healthz')
      void health().then(
        (h) => reply(h.ok ? 200 : 503, 'application/json', `${JSON.stringify(h)}\n`),
        (error: unknown) =>
          reply(503, 'application/json', `${JSON.stringify({ ok: false, error: message(error) })}\n`),
      );
    else reply(404, 'text/plain', 'not found: try /metrics or /health\n');
  });
  return { port: await listen(server, port, host), close: () => closeServer(server) };
}

/** Resolves with the port `server` listens on at `host:port` (0: a free one); rejects with listen()'s error. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Stops listening and ends every open connection (a keep-alive would hold close() open). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** startMetricsServer for a worker, which must never die of it: a port it cannot bind logs one warning. */
export async function tryStartMetricsServer(
  registry: Registry,
  health: () => Promise<Health>,
  port: number,
  host: string,
  logger: Logger,
): Promise<MetricsServer | undefined> {
  try {
    return await startMetricsServer(registry, health, port, host);
  } catch (error) {
    const code = errnoCode(error) ?? 'error';
    const why = code === 'EADDRINUSE' ? `EADDRINUSE: port ${port} is in use, e.g. by another worker` : code;
    logger.warn(
      { port, host, code },
      `no /metrics or /health: cannot listen on ${host}:${port} (${why}); this worker goes on ` +
        `processing without them. Give each worker on this host its own port with ` +
        `ADOPS_METRICS_PORT or --metrics-port (0 turns them off)`,
    );
    return undefined;
  }
}
