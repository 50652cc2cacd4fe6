import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api/errors.js';
import { injectedReply } from './api/fault-replies.js';
import { primeBody, readJsonBody, sendReply, type Handler, type Reply } from './api/http.js';
import { matchRoute } from './api/router.js';
import { acceptsGzip, sendAnswer, sendCut, sendDrip, sendTruncated, type Wire } from './api/send.js';
import { requestKey, type KeyRing } from './auth.js';
import { echoKey } from './echo.js';
import type { FaultPlan } from './faults.js';
import type { Quirks } from './quirks.js';
import type { RateWindow } from './rate-headers.js';
import { endpointKey, type OverrideQueue, type StatsCounter } from './stats.js';
import type { EmulatorOptions, FaultKind } from './types.js';

/** What serving a /v2 request needs: the live state of one emulator. */
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

/** Runs a handler, turning an ApiError into its JSON reply. */
export async function answer(fn: () => Promise<Reply> | Reply): Promise<Reply> {
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

/** Headers the quirks add to every /v2 answer: a skewed Date, Vary for gzip, X-RateLimit-*. */
function quirkHeaders(state: ApiState, q: Quirks, refused: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  if (q.clockSkewSeconds !== 0) headers.date = new Date(Date.now() + q.clockSkewSeconds * 1000).toUTCString();
  if (q.gzip) headers.vary = 'Accept-Encoding';
  if (q.rateLimitHeaders) Object.assign(headers, state.rateWindow.take(refused));
  return headers;
}

/** Serves one /v2 request normally: auth, route, scope, handler. */
async function serveNormally(state: ApiState, req: IncomingMessage, url: URL, q: Quirks): Promise<Reply> {
  const method = req.method ?? 'GET';
  const key = state.keys.authenticate(requestKey(req.headers, q.auth), q.auth);
  const route = matchRoute(state.handlers, method, url.pathname.slice('/v2'.length));
  const accountId = state.keys.authorize(key, route.scope, method, req.socket.remoteAddress ?? '');
  const body = await readJsonBody(req);
  const ctx = {
    method,
    ids: route.ids,
    query: url.searchParams,
    body,
    accountId,
    now: state.clock(),
    quirks: q,
  };
  return route.handler(ctx);
}

/**
 * Answers one /v2 request: a canned override, else the fault plan's decision (latency, drop,
 * injected 5xx/429/malformed, or the normal answer truncated or cut mid-body), else the normal
 * answer; every answer but an override carries the quirks' headers and encoding.
 */
export async function serveApi(
  state: ApiState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const started = Date.now();
  const method = req.method ?? 'GET';
  const path = url.pathname;
  const q = state.quirks();
  const endpoint = endpointKey(method, path);
  state.stats.request(endpoint);
  const acceptEncoding = req.headers['accept-encoding'];
  const log = (status: number, fault?: FaultKind) =>
    state.onRequest?.({
      method,
      endpoint,
      status,
      ms: Date.now() - started,
      ...(fault ? { fault } : {}),
      ...(acceptEncoding === undefined ? {} : { acceptEncoding }),
    });
  const decision = state.faults.decide(path);
  if (decision.latencyMs > 0) state.stats.fault(endpoint, 'latency');
  // Latency is the response time a client sees, counted from arrival: work done meanwhile is
  // hidden in it, as on a real server, instead of queueing after it on this one thread.
  const latency = () => sleepUntil(started + decision.latencyMs);
  const canned = state.overrides.take(path);
  if (canned !== undefined) {
    await latency();
    state.stats.fault(endpoint, 'override');
    req.resume();
    const headers = canned.headers ? { headers: canned.headers } : {};
    await sendReply(res, { status: canned.status, body: canned.body, ...headers });
    log(canned.status, 'override');
    return;
  }
  const wire: Wire = { gzip: q.gzip && acceptsGzip(req.headers['accept-encoding']) };
  const sentKey = requestKey(req.headers);
  const dress = (reply: Reply, refused = false): Reply => {
    const dressed = { ...reply, headers: { ...reply.headers, ...quirkHeaders(state, q, refused) } };
    const echoed =
      sentKey === undefined || q.echoKey.length === 0
        ? undefined
        : echoKey(dressed, sentKey, q.echoKey, q.echoKeyAs);
    if (echoed === undefined) return dressed;
    state.stats.fault(endpoint, 'echo_key');
    return echoed;
  };
  let kind = decision.kind;
  if (kind === 'drop') {
    await latency();
    state.stats.fault(endpoint, 'drop');
    req.socket.destroy();
    log(0, 'drop');
    return;
  }
  if (kind === 'fail' || kind === 'rate_limit' || kind === 'storm' || kind === 'malformed') {
    await latency();
    state.stats.fault(endpoint, kind);
    req.resume();
    const html = kind === 'fail' && q.htmlErrors && decision.html === true;
    const reply = injectedReply(html ? 'html_fail' : kind, state.faults.retryAfterSeconds);
    await sendAnswer(res, dress(reply, kind === 'rate_limit' || kind === 'storm'), wire);
    log(reply.status, kind);
    return;
  }
  const reply = dress(primeBody(await answer(() => serveNormally(state, req, url, q))));
  await latency();
  if ((kind === 'truncate' || kind === 'drop_mid_body') && (reply.body === undefined || reply.status === 204))
    kind = 'drop';
  if (kind === 'truncate' || kind === 'drop_mid_body') {
    state.stats.fault(endpoint, kind);
    if (kind === 'truncate') sendTruncated(res, reply, wire);
    else sendCut(res, reply, wire);
    log(reply.status, kind);
    return;
  }
  if (kind === 'drop') {
    state.stats.fault(endpoint, 'drop');
    req.socket.destroy();
    log(0, 'drop');
    return;
  }
  if (kind === 'drip' && reply.body !== undefined && reply.status !== 204) {
    state.stats.fault(endpoint, 'drip');
    await sendDrip(res, reply, wire, state.faults.dripIntervalMs);
    log(reply.status, 'drip');
    return;
  }
  await sendAnswer(res, reply, wire);
  log(reply.status);
}
