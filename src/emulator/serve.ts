// One /v2 request: key checked, route found, fault plan and quirks applied, answer sent, request counted.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Handler, Reply } from './api/http.js';
import {
  acceptsGzip,
  EmulatorReply,
  matchRoute,
  primeBody,
  readJsonBody,
  sendCut,
  sendHalf,
  sendReply,
} from './api/http.js';
import { echoKey, type FaultPlan, injectedReply, type RateWindow } from './faults.js';
import type {
  EmulatorKey,
  EmulatorOptions,
  EmulatorStats,
  FaultKind,
  OverrideOptions,
  Quirks,
  Scope,
} from './options.js';
import { API_ACCOUNT_ID } from './catalogue.js';

export interface ApiState {
  readonly handlers: Record<string, Handler>;
  readonly keys: KeyRing;
  readonly faults: FaultPlan;
  readonly stats: StatsCounter;
  readonly overrides: OverrideQueue;
  readonly rateWindow: RateWindow;
  readonly quirks: () => Quirks;
  readonly clock: () => Date;
  readonly onRequest: EmulatorOptions['onRequest'];
}

export async function answer(fn: () => Promise<Reply> | Reply): Promise<Reply> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof EmulatorReply) return error.toReply();
    throw error;
  }
}

async function serveNormally(
  state: ApiState,
  req: IncomingMessage,
  url: URL,
  quirks: Quirks,
): Promise<Reply> {
  const method = req.method ?? 'GET';
  const key = state.keys.authenticate(requestKey(req.headers, quirks.auth), quirks.auth);
  const { handler, scope, ids } = matchRoute(state.handlers, method, url.pathname.slice('/v2'.length));
  const accountId = state.keys.authorize(key, scope, method, req.socket.remoteAddress ?? '');
  const body = await readJsonBody(req);
  return handler({ ids, query: url.searchParams, body, accountId, now: state.clock(), quirks });
}

/** An override sent as is, else a fault's or the handler's answer with the quirks' headers and encoding. */
export async function serveApi(
  state: ApiState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const started = Date.now();
  const method = req.method ?? 'GET';
  const q = state.quirks();
  const endpoint = endpointKey(method, url.pathname);
  state.stats.request(endpoint);
  const decision = state.faults.decide(url.pathname);
  if (decision.latencyMs > 0) state.stats.fault(endpoint, 'latency');
  const gzip = q.gzip && acceptsGzip(req.headers['accept-encoding']);
  const sentKey = requestKey(req.headers);
  const dress = (reply: Reply, refused = false): Reply => {
    // The headers the quirks add to every answer: a skewed Date, Vary for gzip, X-RateLimit-*.
    const headers: Record<string, string> = { ...reply.headers };
    if (q.clockSkewSeconds !== 0)
      headers.date = new Date(Date.now() + q.clockSkewSeconds * 1000).toUTCString();
    if (q.gzip) headers.vary = 'Accept-Encoding';
    if (q.rateLimitHeaders) Object.assign(headers, state.rateWindow.take(refused));
    const dressed = { ...reply, headers };
    const echoed =
      sentKey === undefined || q.echoKey.length === 0
        ? undefined
        : echoKey(dressed, sentKey, q.echoKey, q.echoKeyAs);
    if (echoed !== undefined) state.stats.fault(endpoint, 'echo_key');
    return echoed ?? dressed;
  };
  const canned = state.overrides.take(url.pathname);
  let kind: FaultKind | 'none' = canned === undefined ? decision.kind : 'override';
  let reply: Reply = { status: 0 };
  if (canned !== undefined) {
    req.resume();
    reply = canned;
  } else if (kind === 'fail' || kind === 'rate_limit' || kind === 'storm' || kind === 'malformed') {
    req.resume();
    const html = kind === 'fail' && q.htmlErrors && decision.html === true;
    const injected = injectedReply(kind, html, state.faults.retryAfterSeconds);
    reply = dress(injected, kind === 'rate_limit' || kind === 'storm');
  } else if (kind !== 'drop') {
    reply = dress(primeBody(await answer(() => serveNormally(state, req, url, q))));
    // A body-less answer cannot be cut mid-body: the connection drops instead.
    if (reply.body === undefined || reply.status === 204)
      kind = kind === 'truncate' || kind === 'drop_mid_body' ? 'drop' : 'none';
  }
  // Latency counts from arrival, as a client sees it: work done meanwhile hides in it, not queued after.
  const wait = started + decision.latencyMs + (reply.delayMs?.() ?? 0) - Date.now();
  if (wait > 0) await delay(wait);
  // Counted before the answer goes out, so a client that sees it finds it in the stats.
  if (kind !== 'none') state.stats.fault(endpoint, kind);
  if (kind === 'drop') req.socket.destroy();
  else if (kind === 'drop_mid_body') sendCut(res, reply, gzip);
  else if (kind === 'truncate') await sendHalf(res, reply, gzip);
  else if (kind === 'drip') await sendHalf(res, reply, gzip, state.faults.dripIntervalMs);
  else await sendReply(res, reply, gzip && kind !== 'override');
  const acceptEncoding = req.headers['accept-encoding'];
  state.onRequest?.({
    method,
    endpoint,
    status: kind === 'drop' ? 0 : reply.status,
    ms: Date.now() - started,
    ...(kind === 'none' ? {} : { fault: kind }),
    ...(acceptEncoding === undefined ? {} : { acceptEncoding }),
  });
}

export const DEMO_KEY = 'demo-key';

/** The key of a request: `Authorization: Bearer <key>` or `x-api-key: <key>`, or only the one `form` names. */
export function requestKey(
  headers: Record<string, string | string[] | undefined>,
  form: AuthForm = 'any',
): string | undefined {
  const auth = headers.authorization;
  if (form !== 'x-api-key' && typeof auth === 'string') {
    const m = /^bearer\s+(\S+)\s*$/i.exec(auth);
    if (m !== null) return m[1];
  }
  if (form === 'bearer') return undefined;
  const header = headers['x-api-key'];
  return typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined;
}

type AuthForm = Quirks['auth'];

const HOW_TO_SEND: Readonly<Record<AuthForm, string>> = {
  any: 'send "Authorization: Bearer <key>" or "x-api-key: <key>"',
  bearer: 'send "Authorization: Bearer <key>"',
  'x-api-key': 'send "x-api-key: <key>"',
};

export function normaliseIp(ip: string | undefined): string {
  return (ip ?? '').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

/** The accepted keys and their restrictions. Error messages never echo the key. */
export class KeyRing {
  private readonly keys = new Map<string, EmulatorKey>();

  constructor(keys: readonly EmulatorKey[], demoKey: boolean) {
    if (demoKey) this.keys.set(DEMO_KEY, { key: DEMO_KEY });
    for (const k of keys) this.keys.set(k.key, k);
  }

  authenticate(key: string | undefined, form: AuthForm = 'any'): EmulatorKey {
    if (key === undefined)
      throw new EmulatorReply(401, 'unauthorized', `API key missing: ${HOW_TO_SEND[form]}.`);
    const found = this.keys.get(key);
    if (found === undefined)
      throw new EmulatorReply(401, 'unauthorized', 'API key invalid: check the key in your settings.');
    return found;
  }

  authorize(key: EmulatorKey, scope: Scope, method: string, ip: string): number {
    if (key.scopes !== undefined && !key.scopes.includes(scope))
      throw new EmulatorReply(403, 'forbidden', `This API key lacks the scope "${scope}".`);
    if (key.methods !== undefined && !key.methods.map((m) => m.toUpperCase()).includes(method))
      throw new EmulatorReply(403, 'forbidden', `This API key may not use the method ${method}.`);
    if (key.ips !== undefined && !key.ips.map(normaliseIp).includes(normaliseIp(ip)))
      throw new EmulatorReply(403, 'forbidden', `This API key may not be used from ${normaliseIp(ip)}.`);
    return key.accountId ?? API_ACCOUNT_ID;
  }
}

/** 'GET /v2/campaigns/123/creatives/456?x' -> 'GET /v2/campaigns/:id/creatives/:id'. */
export function endpointKey(method: string, path: string): string {
  const clean = path.split('?')[0] ?? '';
  const normalised = clean
    .split('/')
    .map((s) => (/^\d+$/.test(s) ? ':id' : s))
    .join('/')
    .replace(/\/+$/, '');
  return `${method.toUpperCase()} ${normalised === '' ? '/' : normalised}`;
}

export class StatsCounter {
  private requests: Record<string, number> = {};
  private faults: Record<string, number> = {};

  request(endpoint: string): void {
    this.requests[endpoint] = (this.requests[endpoint] ?? 0) + 1;
  }

  /** Counts a fault by kind, and by endpoint unless the answer itself was normal (latency, echoed key). */
  fault(endpoint: string, kind: FaultKind): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
    if (kind !== 'latency' && kind !== 'echo_key') this.faults[endpoint] = (this.faults[endpoint] ?? 0) + 1;
  }

  snapshot(): EmulatorStats {
    return { requests: { ...this.requests }, faults: { ...this.faults } };
  }

  reset(): void {
    this.requests = {};
    this.faults = {};
  }
}

/** Canned answers queued by override(): first match by path prefix wins, each used `times` times. */
export class OverrideQueue {
  private readonly queue: (OverrideOptions & { left: number })[] = [];

  add(o: OverrideOptions): void {
    this.queue.push({ ...o, left: o.times ?? 1 });
  }

  take(path: string): OverrideOptions | undefined {
    const o = this.queue.find((q) => path.startsWith(q.path));
    if (o !== undefined && --o.left <= 0) this.queue.splice(this.queue.indexOf(o), 1);
    return o;
  }
}
