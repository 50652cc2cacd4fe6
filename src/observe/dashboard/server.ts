// The Bull Board web page over our BullMQ queues: one Redis connection, one HTTP server (Express),
// every request first checked against DNS rebinding and cross-site writes (guard.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'bullmq';
import express from 'express';
import { describeRedisTarget, type RedisTarget } from '../../config/connections.js';
import type { Logger } from '../../log/logger.js';
import { closeConnection, ensureReady, producerConnection } from '../../queue/connection.js';
import { ENTITY_QUEUE, REPORT_QUEUE, TICK_QUEUE } from '../../queue/jobs.js';
import { dashboardUrl } from './address.js';
import { listenFailure } from './errors.js';
import { refusal, type HostRules } from './guard.js';

/** The queues the page shows, in its order. */
export const DASHBOARD_QUEUES: readonly string[] = [REPORT_QUEUE, ENTITY_QUEUE, TICK_QUEUE];

export interface DashboardOptions {
  /** Which Redis (config.redis): one server, a Sentinel master or a Cluster. */
  readonly redis: RedisTarget;
  /** BullMQ key prefix (config.queue.prefix). */
  readonly prefix: string;
  /** 0 picks a free port; the returned url names the real one. */
  readonly port: number;
  readonly host: string;
  /** true hides and refuses every action (retry, clean, pause, add, remove...). */
  readonly readOnly: boolean;
  /**
   * Host names it is reached by besides its listening address and localhost (a DNS name, a
   * reverse proxy's name): any other Host is refused, so a DNS-rebound page cannot use it.
   */
  readonly allowedHosts?: readonly string[];
  /** Queue names to show; DASHBOARD_QUEUES by default. */
  readonly queues?: readonly string[];
  /** Where Redis trouble after start is reported; silent when absent. */
  readonly logger?: Logger;
}

export interface Dashboard {
  /** The page, e.g. `http://127.0.0.1:3000/`. */
  readonly url: string;
  /** Stops the server, then the queues and the Redis connection. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts Bull Board on `host:port` over the queues under `prefix`. Rejects with
 * RedisUnavailableError when Redis does not answer, DashboardError when the address cannot be bound;
 * both say what to do.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  // Fail-fast: while Redis is away the page shows an error at once and recovers on reconnect,
  // instead of requests queueing up behind a dead socket.
  const redis = producerConnection({ redis: options.redis });
  try {
    await ensureReady(redis, options.redis);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  redis.on('error', (error: Error) =>
    options.logger?.warn(
      { err: error, redis: describeRedisTarget(options.redis) },
      'Redis error; reconnecting',
    ),
  );
  const queues = (options.queues ?? DASHBOARD_QUEUES).map((name) => {
    // Shared connection: BullMQ leaves it open on queue.close(), we quit it last.
    const queue = new Queue(name, { connection: redis, prefix: options.prefix });
    // Each queue repeats its connection's errors, which the listener above already reports once;
    // without a listener BullMQ's EventEmitter would throw them.
    queue.on('error', (error) => options.logger?.debug({ err: error, queue: name }, 'queue error'));
    return queue;
  });
  const closeQueues = async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
    await closeConnection(redis);
  };

  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/');
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: options.readOnly })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'adops queues', hideDocsLink: true } },
  });
  const app = express();
  app.disable('x-powered-by');
  const rules: HostRules = { bind: options.host, extra: options.allowedHosts ?? [] };
  app.use((req, res, next) => {
    const refused = refusal(req, rules);
    if (refused === undefined) return next();
    options.logger?.warn(
      { method: req.method, path: req.path, host: req.headers.host, origin: req.headers.origin },
      `dashboard refused a request: ${refused.message}`,
    );
    res.status(refused.status).type('text/plain').send(`${refused.message}\n`);
  });
  app.use('/', serverAdapter.getRouter() as express.Router);
  const server = createServer(app);
  try {
    await listen(server, options.port, options.host);
  } catch (error) {
    await closeServer(server);
    await closeQueues();
    // Only an errno from listen() is the user's to fix; anything else is ours, unchanged.
    throw (error as NodeJS.ErrnoException).code?.startsWith('E') === true
      ? listenFailure(options.host, options.port, error)
      : error;
  }
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: dashboardUrl(options.host, port),
    close: () =>
      (closing ??= (async () => {
        await closeServer(server);
        await closeQueues();
      })()),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops listening and ends every open connection (a browser's keep-alive would hold close()). */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
