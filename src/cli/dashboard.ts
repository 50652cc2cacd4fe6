// `adops dashboard`: Bull Board over our queues, every request checked against DNS rebinding (a page
// re-resolving its name to 127.0.0.1 is same-origin; only the Host header tells, so it must name our address)
// and cross-site writes (no other origin in Sec-Fetch-Site, Origin or Referer, and JSON: no form can send it,
// another origin's script needs a preflight we never answer). None of those headers: not a page, it passes.
import { createServer } from 'node:http';
import { isIP } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import express from 'express';
import { describeRedisTarget, type RedisTarget } from '../platform/config/connections.js';
import { errnoCode } from '../platform/config/files.js';
import { closeServer, listen } from '../worker/health-server.js';
import type { Logger } from '../platform/log/logger.js';
import { openQueueBackend } from '../platform/queue/backend.js';
import { ENTITY_QUEUE, REPORT_QUEUE, TICK_QUEUE } from '../platform/queue/jobs.js';
import { type CommandFailed, usageError } from './context.js';

const DASHBOARD_QUEUES: readonly string[] = [REPORT_QUEUE, ENTITY_QUEUE, TICK_QUEUE];

export interface DashboardOptions {
  readonly redis: RedisTarget; // Which Redis (config.redis): one server, a Sentinel master or a Cluster.
  readonly prefix: string;
  /** The queues on Postgres (config.queue's backend and schema, config.databaseUrl); default Redis. */
  readonly postgres?: { readonly schema: string; readonly databaseUrl: string | undefined };
  readonly port: number; // 0 picks a free port; the returned url names the real one.
  readonly host: string;
  readonly readOnly: boolean; // true hides and refuses every action (retry, clean, pause, add, remove...).
  /** Host names besides its address and localhost (a DNS name, a proxy's): any other Host is refused. */
  readonly allowedHosts?: readonly string[];
  readonly queues?: readonly string[];
  readonly logger?: Logger; // Where Redis trouble after start is reported; silent when absent.
}

export interface Dashboard {
  readonly url: string;
  /** Stops the server, then the queues and the Redis connection. Safe to call twice. */
  close(): Promise<void>;
}

/** Starts Bull Board; rejects with RedisUnavailableError, or a usage CommandFailed for --host or --port. */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  // Fail-fast: while Redis is away the page shows an error at once, not requests queued behind a dead socket.
  const pg = options.postgres;
  const backend = await openQueueBackend(
    {
      redis: options.redis,
      databaseUrl: pg?.databaseUrl,
      queue: {
        backend: pg === undefined ? 'redis' : 'postgres',
        schema: pg?.schema ?? '',
        prefix: options.prefix,
      },
    },
    'producer',
  );
  backend.redis?.on('error', (error: Error) =>
    options.logger?.warn(
      { err: error, redis: describeRedisTarget(options.redis) },
      'Redis error; reconnecting',
    ),
  );
  const queues = (options.queues ?? DASHBOARD_QUEUES).map((name) => {
    // Shared connection: BullMQ leaves it open on queue.close(), we close it last.
    const queue = backend.queue(name, {});
    // Each queue repeats its connection's errors (reported above); unheard, BullMQ's EventEmitter would throw.
    queue.on('error', (error) => options.logger?.debug({ err: error, queue: name }, 'queue error'));
    return queue;
  });
  const closeQueues = async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
    await backend.close();
  };

  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/');
  createBullBoard({
    // Bull Board's types name the Redis Queue, yet it reads through the Queue API both backends share.
    queues: queues.map((q) => new BullMQAdapter(q as Queue, { readOnlyMode: options.readOnly })),
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
  let port: number;
  try {
    port = await listen(server, options.port, options.host);
  } catch (error) {
    await closeServer(server);
    await closeQueues();
    // Only an errno from listen() is the user's to fix; anything else is ours, unchanged.
    throw errnoCode(error)?.startsWith('E') === true
      ? listenFailure(options.host, options.port, error)
      : error;
  }

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

/** The URL a browser opens: a wildcard bind address becomes its family's loopback, IPv6 gets brackets. */
export function dashboardUrl(host: string, port: number): string {
  let shown = host;
  if (host === '0.0.0.0' || host === '') shown = '127.0.0.1';
  else if (host === '::' || host === '[::]') shown = '[::1]';
  else if (host.includes(':') && !host.startsWith('[')) shown = `[${host}]`;
  return `http://${shown}:${port}/`;
}

/** Whether a bind address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

/** A listen() failure as bad usage (exit 2), with the fix (the --port or --host) for the usual codes. */
function listenFailure(host: string, port: number, error: unknown): CommandFailed {
  const code = errnoCode(error) ?? 'error';
  const where = `${host}:${port}`;
  const hint =
    code === 'EADDRINUSE'
      ? `port ${port} is already in use: choose another with --port (0 picks a free one)`
      : code === 'EACCES'
        ? `port ${port} needs privileges: choose a port above 1023 with --port`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `${host} is not an address of this machine: use --host 127.0.0.1 (or 0.0.0.0 for all)`
          : `check --host and --port`;
  return usageError(`cannot listen on ${where} (${code}): ${hint}`, error);
}

/** The names a Host header may give for this dashboard: --host and each --allowed-host. */
export interface HostRules {
  readonly bind: string;
  readonly extra: readonly string[];
}

/** The parts of a request the checks read; header names lower-case, as node:http gives them. */
export interface GuardedRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Refusal {
  readonly status: 403 | 415;
  readonly message: string;
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
const HOST_HEADER = /^(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const WILDCARDS: ReadonlySet<string> = new Set(['', '0.0.0.0', '::', '[::]']);

/** A host name as compared: lower case, no trailing dot, IPv6 without brackets. */
function hostKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');
}

/** A Host header's `host[:port]` as a URL would write it, or undefined when it is not one. */
function normalHost(header: string): URL | undefined {
  const url = `http://${header}`;
  return HOST_HEADER.test(header) && URL.canParse(url) ? new URL(url) : undefined;
}

/** Whether `hostname` (from a Host header) names this dashboard under `rules`. */
export function servesHost(hostname: string, rules: HostRules): boolean {
  const name = hostKey(hostname);
  // The browser itself resolves these to this machine, never DNS: no page can rebind them.
  if (name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true;
  if (isIP(name) === 4 && name.startsWith('127.')) return true;
  const bind = hostKey(rules.bind);
  // An IP address cannot be rebound either: a page whose origin is this IP came from this server.
  // Listening on every interface, any of this machine's addresses (or a port mapping's) may be used.
  if (isIP(name) !== 0 && (WILDCARDS.has(rules.bind) || name === bind)) return true;
  return name === bind || rules.extra.some((extra) => hostKey(extra) === name);
}

/** The one value of a header, or undefined when absent (node:http joins repeated ones it knows). */
function header(req: GuardedRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `host[:port]` of an Origin or Referer URL, or undefined when it has none (`null`, junk). */
function hostOfUrl(url: string): string | undefined {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  return parsed?.protocol === 'http:' || parsed?.protocol === 'https:' ? parsed.host : undefined;
}

/** Why `req` must be refused under `rules`, or undefined when it may go on to Bull Board. */
export function refusal(req: GuardedRequest, rules: HostRules): Refusal | undefined {
  const hostHeader = header(req, 'host') ?? '';
  const host = normalHost(hostHeader);
  if (host === undefined || !servesHost(host.hostname, rules))
    return {
      status: 403,
      message:
        `Host ${hostHeader === '' ? '(none)' : hostHeader} is not an address of this dashboard (a DNS rebinding page?): ` +
        `open it by its listening address or localhost, or start it with --allowed-host NAME for the name you use`,
    };
  if (SAFE_METHODS.has(req.method.toUpperCase())) return undefined;

  const crossSite = (what: string): Refusal => ({
    status: 403,
    message: `cross-site write refused (${what}): actions must come from the dashboard's own page`,
  });
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return crossSite(`Sec-Fetch-Site: ${site}`);
  const origin = header(req, 'origin');
  if (origin !== undefined) {
    if (hostOfUrl(origin) !== host.host) return crossSite(`Origin ${origin} is not ${host.host}`);
  } else {
    const referer = header(req, 'referer');
    if (referer !== undefined && hostOfUrl(referer) !== host.host)
      return crossSite(`Referer from ${hostOfUrl(referer) ?? 'elsewhere'}, not ${host.host}`);
  }

  const type = header(req, 'content-type');
  const length = header(req, 'content-length');
  const hasBody = header(req, 'transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  const json = type?.split(';')[0]?.trim().toLowerCase() === 'application/json';
  if (type !== undefined ? !json : hasBody)
    return {
      status: 415,
      message: `write requests must send JSON (Content-Type: application/json), not ${type ?? 'a body without a type'}`,
    };
  return undefined;
}
