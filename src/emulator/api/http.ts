/**
 * The HTTP layer of the /v2 API: replies and handlers, error answers, routing, request bodies, and
 * sending, whole, streamed, gzip-compressed, or cut short and dripped as the faults ask.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { constants, createGzip, gzipSync } from 'node:zlib';
import type { Quirks, Scope } from '../options.js';

/** A handler's answer: a string body is sent with content-length, an iterable one streamed (chunked). */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer | Iterable<string>;
}

/** What a /v2 handler gets: the path's id segments as written, query, parsed body and write stamp. */
export interface RequestContext {
  readonly method: string;
  readonly ids: readonly string[];
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly accountId: number;
  readonly now: Date;
  /** The quirks in force when the request arrived. */
  readonly quirks: Quirks;
}

export type Handler = (ctx: RequestContext) => Reply;

/** A JSON reply. */
export function json(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value) };
}

/** 204 with an empty body. */
export const NO_CONTENT: Reply = { status: 204 };

const MAX_BODY = 1024 * 1024;

/** Reads and parses a JSON request body; undefined when empty; 400 when not JSON or above 1 MiB. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw badRequest('The request body is larger than 1 MiB.');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
}

/** Materialises a reply body (for truncation, where content-length must be the full length). */
export function bodyBuffer(reply: Reply): Buffer {
  const b = reply.body;
  if (b === undefined) return Buffer.alloc(0);
  if (typeof b === 'string') return Buffer.from(b, 'utf8');
  if (Buffer.isBuffer(b)) return b;
  return Buffer.from([...b].join(''), 'utf8');
}

/**
 * Starts a streamed body: its first chunk is made now (for a report, that is the sort and the first
 * 64 KB), and a body of at most two chunks becomes one string. The reply then sends without more work
 * for a small body; a big one goes on streaming the rest.
 */
export function primeBody(reply: Reply): Reply {
  const b = reply.body;
  if (b === undefined || typeof b === 'string' || Buffer.isBuffer(b)) return reply;
  const chunks = b[Symbol.iterator]();
  const first = chunks.next();
  if (first.done === true) return { ...reply, body: '' };
  const second = chunks.next();
  if (second.done === true) return { ...reply, body: first.value };
  return {
    ...reply,
    body: (function* () {
      yield first.value;
      yield second.value;
      yield* { [Symbol.iterator]: () => chunks };
    })(),
  };
}

/**
 * Sends a reply. A body of at most two chunks goes out whole with content-length, like most servers
 * answer small reports; a longer one is written chunk by chunk, waiting on 'drain' (backpressure).
 */
export async function sendReply(res: ServerResponse, given: Reply): Promise<void> {
  const reply = primeBody(given);
  const headers: Record<string, string | number> = { ...reply.headers };
  const b = reply.body;
  if (b !== undefined && reply.status !== 204 && headers['content-type'] === undefined)
    headers['content-type'] = 'application/json; charset=utf-8';
  if (b === undefined || reply.status === 204) {
    res.writeHead(reply.status, { ...headers, 'content-length': 0 });
    res.end();
    return;
  }
  if (typeof b === 'string' || Buffer.isBuffer(b)) {
    res.writeHead(reply.status, { ...headers, 'content-length': Buffer.byteLength(b) });
    res.end(b);
    return;
  }
  res.writeHead(reply.status, headers);
  for (const chunk of b) {
    if (res.destroyed) return;
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
  }
  res.end();
}

/**
 * An error answer of the emulator. Its JSON body (the spec leaves the fields open) is
 * `{"status": 400, "error": "bad_request", "message": "...", "field": "tier"}`; `field` only when one
 * request field is at fault, as a dotted path (`targeting.geo.locations.countries[1]`).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly field?: string,
    /** Headers of the answer: Allow of a 405, Retry-After of a 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  /** The reply: this status, the JSON body, and the headers. */
  toReply(): Reply {
    const { status, error, message, field, headers } = this;
    const body = JSON.stringify({ status, error, message, ...(field === undefined ? {} : { field }) });
    return { status, body, ...(headers === undefined ? {} : { headers }) };
  }
}

/** 400 naming the field at fault. */
export function badRequest(message: string, field?: string): ApiError {
  return new ApiError(400, 'bad_request', message, field);
}

/** 404 for an unknown id or path. */
export function notFound(message: string): ApiError {
  return new ApiError(404, 'not_found', message);
}

/**
 * Matches a path below /v2 ('/campaigns/12/creatives') against the handler patterns
 * ('GET /campaigns/:id/creatives'). Unknown paths are 404; known paths with another method 405.
 */
export function matchRoute(
  handlers: Record<string, Handler>,
  method: string,
  subPath: string,
): { handler: Handler; scope: Scope; ids: string[] } {
  const segments = subPath.split('/').filter((s) => s !== '');
  const allowed: string[] = [];
  for (const [pattern, handler] of Object.entries(handlers)) {
    const [m, p] = pattern.split(' ') as [string, string];
    const parts = p.split('/').filter((s) => s !== '');
    if (parts.length !== segments.length) continue;
    const ids: string[] = [];
    const matches = parts.every((part, i) => {
      if (part === ':id') {
        ids.push(segments[i] ?? '');
        return true;
      }
      return part === segments[i];
    });
    if (!matches) continue;
    if (m !== method) {
      allowed.push(m);
      continue;
    }
    const scope: Scope =
      segments[0] === 'reports' ? 'reports' : segments.length >= 3 ? 'creatives' : 'campaigns';
    return { handler, scope, ids };
  }
  if (allowed.length > 0) {
    const allow = allowed.join(', ');
    throw new ApiError(405, 'method_not_allowed', `Use one of: ${allow}.`, undefined, { allow });
  }
  throw notFound(`No endpoint ${method} /v2${subPath}.`);
}

/** How an answer goes on the wire: gzip-compressed or not (the gzip quirk and the request's Accept-Encoding). */
export interface Wire {
  readonly gzip: boolean;
}

// Level 1, as nginx' default gzip_comp_level: a 100 MB report compresses in about a second, not five.
const GZIP = { level: constants.Z_BEST_SPEED };

/** True when an Accept-Encoding header accepts gzip (`gzip`, `x-gzip` or `*`, with a q-value above 0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    if (!['gzip', 'x-gzip', '*'].includes(coding.trim())) return false;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return q === undefined || Number(q) > 0;
  });
}

/** Headers of a reply on the wire: JSON unless it says otherwise, and gzip when the wire is. */
function wireHeaders(reply: Reply, wire: Wire): Record<string, string> {
  const headers = { 'content-type': 'application/json; charset=utf-8', ...reply.headers };
  return wire.gzip ? { ...headers, 'content-encoding': 'gzip' } : headers;
}

/**
 * Sends a reply; gzip-compressed while streaming when `wire.gzip` (a zlib stream between the body's
 * chunks and the socket, so backpressure holds end to end and a big report never sits whole in memory).
 */
export async function sendAnswer(res: ServerResponse, reply: Reply, wire: Wire): Promise<void> {
  if (!wire.gzip || reply.body === undefined || reply.status === 204) return sendReply(res, reply);
  res.writeHead(reply.status, wireHeaders(reply, wire));
  const body = reply.body;
  const chunks: Iterable<string | Buffer> = typeof body === 'string' || Buffer.isBuffer(body) ? [body] : body;
  try {
    await pipeline(Readable.from(chunks), createGzip(GZIP), res);
  } catch {
    // The client went away mid-body: nothing left to answer.
  }
}

/** Writes the headers with the full content-length of the whole body as it goes on the wire; returns that body. */
function writeWhole(res: ServerResponse, reply: Reply, wire: Wire): Buffer {
  const raw = bodyBuffer(reply);
  const body = wire.gzip ? gzipSync(raw, GZIP) : raw;
  res.writeHead(reply.status, { ...wireHeaders(reply, wire), 'content-length': body.length });
  return body;
}

/** Sends the first half of a full body with the full content-length, then cuts the connection. */
export function sendTruncated(res: ServerResponse, reply: Reply, wire: Wire): void {
  const body = writeWhole(res, reply, wire);
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
}

/**
 * Drops the connection mid-body: the headers and part of a chunked body (half of a small body, the
 * first ~64 KB chunk of a streamed one) are sent, then the socket is destroyed, with no final chunk.
 */
export function sendCut(res: ServerResponse, reply: Reply, wire: Wire): void {
  const b = primeBody(reply).body;
  let part: string | Buffer = '';
  if (typeof b === 'string' || Buffer.isBuffer(b)) {
    const whole = Buffer.isBuffer(b) ? b : Buffer.from(b, 'utf8');
    part = whole.subarray(0, Math.floor(whole.length / 2));
  } else if (b !== undefined) part = b[Symbol.iterator]().next().value ?? '';
  const bytes = Buffer.isBuffer(part) ? part : Buffer.from(part, 'utf8');
  // Sync flush: the compressed bytes so far, with no gzip trailer (the stream is cut, not ended).
  const wireBytes = wire.gzip ? gzipSync(bytes, { ...GZIP, finishFlush: constants.Z_SYNC_FLUSH }) : bytes;
  res.writeHead(reply.status, wireHeaders(reply, wire));
  res.write(wireBytes, () => res.socket?.destroy());
}

/**
 * Drips the answer: its headers (with the full content-length) and the first half of its body at
 * once, then the rest one byte every `intervalMs`, until it is all sent or the client goes away.
 * A server (or proxy) that trickles a body this way never trips an idle timeout between chunks.
 */
export async function sendDrip(
  res: ServerResponse,
  reply: Reply,
  wire: Wire,
  intervalMs: number,
): Promise<void> {
  const body = writeWhole(res, reply, wire);
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let at = Math.floor(body.length / 2);
  res.write(body.subarray(0, at));
  while (at < body.length && !gone.signal.aborted) {
    await delay(intervalMs, undefined, { signal: gone.signal }).catch(() => undefined);
    if (!gone.signal.aborted) res.write(body.subarray(at, ++at));
  }
  if (!gone.signal.aborted) res.end();
}
