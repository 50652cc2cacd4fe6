// The /v2 HTTP layer: replies, errors, routing, bodies, and sending (whole, streamed, gzipped, cut, dripped).
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
  /** Extra time to answer, asked once the body's first chunks are made (its cost: msPer1000Rows). */
  delayMs?: () => number;
}

export interface RequestContext {
  readonly ids: readonly string[];
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly accountId: number;
  readonly now: Date;
  readonly quirks: Quirks;
}

export type Handler = (ctx: RequestContext) => Reply;

export function json(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value) };
}

export const NO_CONTENT: Reply = { status: 204 };

const MAX_BODY = 1024 * 1024;

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    if (!Buffer.isBuffer(chunk)) continue;
    size += chunk.length;
    if (size > MAX_BODY) throw badRequest('The request body is larger than 1 MiB.');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
}

/** Materialises a reply body (for truncation, where content-length must be the full length). */
export function bodyBuffer({ body }: Reply): Buffer {
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(
    typeof body === 'string' || body === undefined ? (body ?? '') : [...body].join(''),
    'utf8',
  );
}

/** Makes a streamed body's first chunk now (a report's sort); at most two chunks become one string. */
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

/** Sends one string whole with content-length, else piped so backpressure holds and memory stays low. */
export async function sendReply(res: ServerResponse, reply: Reply, gzip = false): Promise<void> {
  const b = reply.status === 204 ? undefined : primeBody(reply).body;
  if (b === undefined) {
    res.writeHead(reply.status, { ...reply.headers, 'content-length': 0 });
    res.end();
    return;
  }
  const headers = wireHeaders(reply, gzip);
  const whole = typeof b === 'string' || Buffer.isBuffer(b);
  if (whole && !gzip) {
    res.writeHead(reply.status, { ...headers, 'content-length': Buffer.byteLength(b) });
    res.end(b);
    return;
  }
  res.writeHead(reply.status, headers);
  const body = Readable.from(whole ? [b] : b, { highWaterMark: 1 });
  // A rejection means the client went away mid-body: nothing left to answer.
  await (gzip ? pipeline(body, createGzip(GZIP), res) : pipeline(body, res)).catch(() => undefined);
}

/** An error answer a handler throws; its JSON body is described in docs/emulator.md. */
export class EmulatorReply extends Error {
  override readonly name = 'EmulatorReply';
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly field?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toReply(): Reply {
    const { status, error, message, field, headers } = this;
    const body = JSON.stringify({ status, error, message, ...(field === undefined ? {} : { field }) });
    return { status, body, ...(headers === undefined ? {} : { headers }) };
  }
}

export function badRequest(message: string, field?: string): EmulatorReply {
  return new EmulatorReply(400, 'bad_request', message, field);
}

export function notFound(message: string): EmulatorReply {
  return new EmulatorReply(404, 'not_found', message);
}

export function matchRoute(
  handlers: Record<string, Handler>,
  method: string,
  subPath: string,
): { handler: Handler; scope: Scope; ids: string[] } {
  const segments = subPath.split('/').filter((s) => s !== '');
  const allowed: string[] = [];
  for (const [pattern, handler] of Object.entries(handlers)) {
    const [m = '', p = ''] = pattern.split(' ');
    const parts = p.split('/').filter((s) => s !== '');
    if (parts.length !== segments.length || parts.some((part, i) => part !== ':id' && part !== segments[i]))
      continue;
    if (m !== method) {
      allowed.push(m);
      continue;
    }
    const ids = segments.filter((_, i) => parts[i] === ':id');
    const scope: Scope =
      segments[0] === 'reports' ? 'reports' : segments.length >= 3 ? 'creatives' : 'campaigns';
    return { handler, scope, ids };
  }
  if (allowed.length > 0) {
    const allow = allowed.join(', ');
    throw new EmulatorReply(405, 'method_not_allowed', `Use one of: ${allow}.`, undefined, { allow });
  }
  throw notFound(`No endpoint ${method} /v2${subPath}.`);
}

// Level 1, as nginx' default gzip_comp_level: a 100 MB report compresses in about a second, not five.
const GZIP = { level: constants.Z_BEST_SPEED };

export function acceptsGzip(header: string | string[] | undefined): boolean {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    if (!['gzip', 'x-gzip', '*'].includes(coding.trim())) return false;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return q === undefined || Number(q) > 0;
  });
}

function wireHeaders(reply: Reply, gzip: boolean): Record<string, string> {
  const headers = { 'content-type': 'application/json; charset=utf-8', ...reply.headers };
  return gzip ? { ...headers, 'content-encoding': 'gzip' } : headers;
}

/** Drops the connection mid-body: after the headers and half of a small body or a streamed one's first chunk. */
export function sendCut(res: ServerResponse, reply: Reply, gzip: boolean): void {
  const b = primeBody(reply).body ?? '';
  const whole = typeof b === 'string' || Buffer.isBuffer(b);
  const first = whole ? b : (b[Symbol.iterator]().next().value ?? '');
  const bytes = typeof first === 'string' ? Buffer.from(first, 'utf8') : first;
  const part = whole ? bytes.subarray(0, Math.floor(bytes.length / 2)) : bytes;
  // Sync flush: the compressed bytes so far, with no gzip trailer (the stream is cut, not ended).
  const wireBytes = gzip ? gzipSync(part, { ...GZIP, finishFlush: constants.Z_SYNC_FLUSH }) : part;
  res.writeHead(reply.status, wireHeaders(reply, gzip));
  res.write(wireBytes, () => res.socket?.destroy());
}

/** Sends the full content-length and half the body, then cuts, or with `dripMs` drips the rest bytewise. */
export async function sendHalf(
  res: ServerResponse,
  reply: Reply,
  gzip: boolean,
  dripMs?: number,
): Promise<void> {
  const raw = bodyBuffer(reply);
  const body = gzip ? gzipSync(raw, GZIP) : raw;
  res.writeHead(reply.status, { ...wireHeaders(reply, gzip), 'content-length': body.length });
  let at = Math.floor(body.length / 2);
  if (dripMs === undefined) {
    res.write(body.subarray(0, at), () => res.socket?.destroy());
    return;
  }
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  res.write(body.subarray(0, at));
  while (at < body.length && !gone.signal.aborted) {
    await delay(dripMs, undefined, { signal: gone.signal }).catch(() => undefined);
    if (!gone.signal.aborted) res.write(body.subarray(at, ++at));
  }
  if (!gone.signal.aborted) res.end();
}
