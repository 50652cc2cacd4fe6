import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { catalogueHandlers } from './api/catalogue-routes.js';
import { ApiError } from './api/errors.js';
import { readJsonBody, sendReply } from './api/http.js';
import { reportHandlers } from './api/report-route.js';
import { KeyRing } from './auth.js';
import { generateCatalogue } from './catalogue.js';
import { handleControl } from './control.js';
import { FaultPlan } from './faults.js';
import { resolveProfile } from './profiles.js';
import { resolveQuirks, type Quirks } from './quirks.js';
import { ReportEngine } from './report/engine.js';
import { buildTrafficModel } from './report/traffic.js';
import { RateWindow } from './rate-headers.js';
import { answer, serveApi, type ApiState } from './serve-api.js';
import { OverrideQueue, StatsCounter } from './stats.js';
import { CatalogueStore } from './store.js';
import type { EmulatorOptions, RunningEmulator } from './types.js';

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
  const initial = resolveProfile(options.profile, options.quirks, options.faults);
  const faults = new FaultPlan(initial.faults);
  let quirks: Quirks = initial.quirks;
  const stats = new StatsCounter();
  const overrides = new OverrideQueue();
  let clock: () => Date = options.now ?? (() => new Date());
  const sockets = new Set<Socket>();

  const control = {
    setFaults: (f: EmulatorOptions['faults'] & object) => faults.set(f),
    setQuirks: (q: EmulatorOptions['quirks'] & object) => {
      quirks = resolveQuirks(q);
    },
    quirks: () => ({ ...quirks }),
    setNow: (d: Date) => {
      const fixed = new Date(d.getTime());
      clock = () => fixed;
    },
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    override: (o: Parameters<RunningEmulator['override']>[0]) => overrides.add(o),
  };

  const state: ApiState = {
    handlers,
    keys,
    faults,
    stats,
    overrides,
    rateWindow: new RateWindow(),
    quirks: () => quirks,
    clock: () => clock(),
    onRequest: options.onRequest,
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
    await serveApi(state, req, res, url);
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
