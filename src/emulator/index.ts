// The API emulator (docs/emulator.md): its start, its control endpoints, and its public surface.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, validateHeaderName, validateHeaderValue } from 'node:http';
import { once } from 'node:events';
import { z } from 'zod';
import { catalogueHandlers } from './api/catalogue.js';
import { EmulatorReply, badRequest, json, readJsonBody, sendReply, type Reply } from './api/http.js';
import { reportHandlers } from './api/reports.js';
import { generateCatalogue } from './catalogue.js';
import { FaultPlan, RateWindow } from './faults.js';
import { resolveProfile } from './flags.js';
import type { EmulatorOptions, EmulatorQuirks, FaultOptions, OverrideOptions, Quirks } from './options.js';
import { FAULT_OPTIONS_SCHEMA, QUIRKS_SCHEMA, resolveQuirks } from './options.js';
import { ReportEngine } from './report/render.js';
import { buildTrafficModel } from './report/traffic.js';
import { answer, KeyRing, OverrideQueue, serveApi, StatsCounter, type ApiState } from './serve.js';

export { ECHO_HEADER } from './faults.js';
export * from './flags.js';
export { ECHO_FORMS, ECHO_PLACES, PROFILE_NAMES, REPORT_PARAMS_FORMS } from './options.js';
export type * from './options.js';
export { DEMO_KEY } from './serve.js';
export type { Campaign, Creative } from './catalogue.js';
export type RunningEmulator = Awaited<ReturnType<typeof startEmulator>>;

/** Starts the API emulator once it listens: the same seed gives the same catalogue and report bytes. */
export async function startEmulator(options: EmulatorOptions = {}) {
  const seed = options.seed ?? 1;
  const cellsPerDay = options.cellsPerDay ?? 2000;
  // Flights sit around the day the emulator starts (its clock's), so pacing has every state on any day.
  const first = Math.floor((options.now?.() ?? new Date()).getTime() / 86_400_000) * 86400;
  const catalogue = generateCatalogue(seed, options.catalogue, first);
  const engine = new ReportEngine(buildTrafficModel(catalogue), {
    seed,
    cellsPerDay,
    lateDataDays: options.lateDataDays ?? 3,
  });
  const initial = resolveProfile(options.profile, options.quirks, options.faults);
  let quirks: Quirks = initial.quirks;
  let clock: () => Date = options.now ?? (() => new Date());
  const state: ApiState = {
    handlers: {
      ...catalogueHandlers(catalogue, seed),
      ...reportHandlers(engine, cellsPerDay),
    },
    keys: new KeyRing(options.keys ?? [], options.demoKey ?? true),
    faults: new FaultPlan(initial.faults),
    stats: new StatsCounter(),
    overrides: new OverrideQueue(),
    rateWindow: new RateWindow(),
    onRequest: options.onRequest,
    quirks: () => quirks,
    clock: () => clock(),
  };
  const control = {
    setFaults: (f: FaultOptions) => state.faults.set(f),
    setQuirks: (q: EmulatorQuirks) => {
      quirks = resolveQuirks(q);
    },
    quirks: () => ({ ...quirks }),
    setNow: (d: Date) => {
      const fixed = new Date(d.getTime());
      clock = () => fixed;
    },
    stats: () => state.stats.snapshot(),
    resetStats: () => state.stats.reset(),
    override: (o: OverrideOptions) => state.overrides.add(o),
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname;
    if (path === '/v2' || path.startsWith('/v2/')) return serveApi(state, req, res, url);
    const reply = path.startsWith('/_control/')
      ? await answer(async () => handleControl(control, req.method ?? 'GET', path, await readJsonBody(req)))
      : new EmulatorReply(404, 'not_found', `No endpoint ${path}: the API lives under /v2.`).toReply();
    await sendReply(res, reply);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Only a bug lands here; answer 500 if still possible, never crash the process.
      if (!res.headersSent)
        void sendReply(res, new EmulatorReply(500, 'server_error', String(error)).toReply());
      else res.destroy();
    });
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the emulator listens on no TCP port');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;
  return {
    url: `${origin}/v2`,
    /** Where the control endpoints live (origin + '/_control/...'); `url` is origin + '/v2'. */
    origin,
    ...control,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

const CLOCK_SCHEMA = z.object({
  now: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'an ISO date-time'),
});
const OVERRIDE_SCHEMA = z.object({
  path: z.string().startsWith('/'),
  status: z.number().int().min(100).max(599),
  body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]),
  headers: z.record(z.string(), z.string()).superRefine(headerProblems).optional(),
  times: z.number().int().min(1).optional(),
});

/** Refuses at queue time a header Node would refuse at send time (else the matching request gets a 500). */
function headerProblems(headers: Record<string, string>, ctx: z.RefinementCtx): void {
  const fails = (check: () => void) => {
    try {
      check();
      return false;
    } catch {
      return true;
    }
  };
  for (const [name, value] of Object.entries(headers)) {
    if (fails(() => validateHeaderName(name)))
      return ctx.addIssue({ code: 'custom', message: `${JSON.stringify(name)} is not a valid header name` });
    const message =
      'the value holds a character a header cannot carry (CR, LF, NUL or another control character)';
    if (fails(() => validateHeaderValue(name, value)))
      return ctx.addIssue({ code: 'custom', path: [name], message });
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
  const field = [...(issue?.path ?? []), ...keys.slice(0, 1)].join('.');
  const message = keys.length > 0 ? 'is not a known field' : (issue?.message ?? 'invalid');
  throw badRequest(`${field || 'body'}: ${message}`, field || undefined);
}

/** The control endpoints outside /v2 (no auth), one per RunningEmulator method: a JSON answer, else 204. */
type Control = Omit<RunningEmulator, 'url' | 'origin' | 'close'>;
const CONTROL: Readonly<Record<string, (emulator: Control, body: unknown) => unknown>> = {
  'GET /_control/stats': (e) => e.stats(),
  'POST /_control/stats/reset': (e) => e.resetStats(),
  'PUT /_control/faults': (e, body) => e.setFaults(parse(FAULT_OPTIONS_SCHEMA, body ?? {})),
  'GET /_control/quirks': (e) => e.quirks(),
  'PUT /_control/quirks': (e, body) => e.setQuirks(parse(QUIRKS_SCHEMA, body ?? {})),
  'PUT /_control/clock': (e, body) => e.setNow(new Date(parse(CLOCK_SCHEMA, body).now)),
  'POST /_control/override': (e, body) => {
    const o = parse(OVERRIDE_SCHEMA, body);
    e.override({ ...o, body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) });
  },
};

function handleControl(emulator: Control, method: string, path: string, body: unknown): Reply {
  const route = `${method} ${path.replace(/\/+$/, '')}`;
  const endpoint = Object.hasOwn(CONTROL, route) ? CONTROL[route] : undefined;
  if (endpoint === undefined) throw new EmulatorReply(404, 'not_found', `No control endpoint ${route}.`);
  const answered = endpoint(emulator, body);
  return answered === undefined ? { status: 204 } : json(200, answered);
}
