import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { catalogueHandlers } from './api/catalogue-routes.js';
import { ApiError } from './api/errors.js';
import { injectedReply } from './api/fault-replies.js';
import { primeBody, readJsonBody, sendReply, sendTruncated, type Reply } from './api/http.js';
import { reportHandlers } from './api/report-route.js';
import { matchRoute } from './api/router.js';
import { KeyRing, requestKey } from './auth.js';
import { generateCatalogue } from './catalogue.js';
import { handleControl } from './control.js';
import { FaultPlan } from './faults.js';
import { ReportEngine } from './report/engine.js';
import { buildTrafficModel } from './report/traffic.js';
import { endpointKey, OverrideQueue, StatsCounter } from './stats.js';
import { CatalogueStore } from './store.js';
import type { EmulatorOptions, FaultKind, RunningEmulator } from './types.js';

/**
 * Starts the API emulator (see docs/emulator.md) and resolves once it listens. The same seed gives
 * the same catalogue and report bytes; `close()` ends every open connection.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const seed = options.seed ?? 1;
  const cellsPerDay = options.cellsPerDay ?? 2000;
  const catalogue = generateCatalogue(seed, options.catalogue);
  const engine = new ReportEngine(buildTrafficModel(catalogue), {
    seed,
    cellsPerDay,
    lateDataDays: options.lateDataDays ?? 3,
  });
  const store = new CatalogueStore(catalogue, seed);
  const handlers = { ...catalogueHandlers(store), ...reportHandlers(engine, cellsPerDay) };
  const keys = new KeyRing(options.keys ?? [], options.demoKey ?? true);
  const faults = new FaultPlan(options.faults);
  const stats = new StatsCounter();
  const overrides = new OverrideQueue();
  let clock: () => Date = options.now ?? (() => new Date());
  const sockets = new Set<Socket>();

  const control = {
    setFaults: (f: EmulatorOptions['faults'] & object) => faults.set(f),
    setNow: (d: Date) => {
      const fixed = new Date(d.getTime());
      clock = () => fixed;
    },
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    override: (o: Parameters<RunningEmulator['override']>[0]) => overrides.add(o),
  };

  /** Serves one /v2 request normally: auth, route, scope, handler. */
  async function serveApi(req: IncomingMessage, url: URL): Promise<Reply> {
    const method = req.method ?? 'GET';
    const key = keys.authenticate(requestKey(req.headers));
    const route = matchRoute(handlers, method, url.pathname.slice('/v2'.length));
    const accountId = keys.authorize(key, route.scope, method, req.socket.remoteAddress ?? '');
    const body = await readJsonBody(req);
    return route.handler({ method, ids: route.ids, query: url.searchParams, body, accountId, now: clock() });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (path.startsWith('/_control/')) {
      await sendReply(
        res,
        await answer(async () => handleControl(control, method, path, await readJsonBody(req))),
      );
      return;
    }
    if (path !== '/v2' && !path.startsWith('/v2/')) {
      await sendReply(
        res,
        new ApiError(404, 'not_found', `No endpoint ${path}: the API lives under /v2.`).toReply(),
      );
      return;
    }
    const endpoint = endpointKey(method, path);
    stats.request(endpoint);
    const log = (status: number, fault?: FaultKind) =>
      options.onRequest?.({
        method,
        endpoint,
        status,
        ms: Date.now() - started,
        ...(fault ? { fault } : {}),
      });
    const decision = faults.decide(path);
    if (decision.latencyMs > 0) stats.fault(endpoint, 'latency');
    // Latency is the response time a client sees, counted from arrival: work done meanwhile is
    // hidden in it, as on a real server, instead of queueing after it on this one thread.
    const latency = () => sleepUntil(started + decision.latencyMs);
    const canned = overrides.take(path);
    if (canned !== undefined) {
      await latency();
      stats.fault(endpoint, 'override');
      req.resume();
      await sendReply(res, {
        status: canned.status,
        body: canned.body,
        ...(canned.headers ? { headers: canned.headers } : {}),
      });
      log(canned.status, 'override');
      return;
    }
    let kind = decision.kind;
    if (kind === 'drop') {
      await latency();
      stats.fault(endpoint, 'drop');
      req.socket.destroy();
      log(0, 'drop');
      return;
    }
    if (kind === 'fail' || kind === 'rate_limit' || kind === 'malformed') {
      await latency();
      stats.fault(endpoint, kind);
      req.resume();
      const reply = injectedReply(kind, faults.retryAfterSeconds);
      await sendReply(res, reply);
      log(reply.status, kind);
      return;
    }
    const reply = primeBody(await answer(() => serveApi(req, url)));
    await latency();
    if (kind === 'truncate' && (reply.body === undefined || reply.status === 204)) kind = 'drop';
    if (kind === 'truncate') {
      stats.fault(endpoint, 'truncate');
      sendTruncated(res, reply);
      log(reply.status, 'truncate');
      return;
    }
    if (kind === 'drop') {
      stats.fault(endpoint, 'drop');
      req.socket.destroy();
      log(0, 'drop');
      return;
    }
    await sendReply(res, reply);
    log(reply.status);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Only a bug lands here; answer 500 if still possible, never crash the process.
      if (!res.headersSent) void sendReply(res, new ApiError(500, 'server_error', String(error)).toReply());
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;
  return {
    url: `${origin}/v2`,
    origin,
    ...control,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Runs a handler, turning an ApiError into its JSON reply. */
async function answer(fn: () => Promise<Reply> | Reply): Promise<Reply> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ApiError) return error.toReply();
    throw error;
  }
}

/** Resolves at `deadline` (a Date.now() time), at once if it has passed. */
async function sleepUntil(deadline: number): Promise<void> {
  const wait = deadline - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
