import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { constants, createGzip, gzipSync } from 'node:zlib';
import { bodyBuffer, primeBody, sendReply, type Reply } from './http.js';

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

function gzipHeaders(reply: Reply): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', ...reply.headers, 'content-encoding': 'gzip' };
}

/**
 * Sends a reply; gzip-compressed while streaming when `wire.gzip` (a zlib stream between the body's
 * chunks and the socket, so backpressure holds end to end and a big report never sits whole in memory).
 */
export async function sendAnswer(res: ServerResponse, reply: Reply, wire: Wire): Promise<void> {
  if (!wire.gzip || reply.body === undefined || reply.status === 204) return sendReply(res, reply);
  res.writeHead(reply.status, gzipHeaders(reply));
  const body = reply.body;
  const chunks: Iterable<string | Buffer> = typeof body === 'string' || Buffer.isBuffer(body) ? [body] : body;
  try {
    await pipeline(Readable.from(chunks), createGzip(GZIP), res);
  } catch {
    // The client went away mid-body: nothing left to answer.
  }
}

/** Sends the first half of a full body with the full content-length, then cuts the connection. */
export function sendTruncated(res: ServerResponse, reply: Reply, wire: Wire): void {
  const raw = bodyBuffer(reply);
  const body = wire.gzip ? gzipSync(raw, GZIP) : raw;
  res.writeHead(reply.status === 204 ? 200 : reply.status, {
    ...(wire.gzip
      ? gzipHeaders(reply)
      : { ...reply.headers, 'content-type': 'application/json; charset=utf-8' }),
    'content-length': body.length,
  });
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
}

/**
 * Drops the connection mid-body: the headers and part of a chunked body (half of a small body, the
 * first ~64 KB chunk of a streamed one) are sent, then the socket is destroyed, with no final chunk.
 */
export function sendCut(res: ServerResponse, reply: Reply, wire: Wire): void {
  const primed = primeBody(reply);
  const b = primed.body;
  let part: string | Buffer = '';
  if (typeof b === 'string' || Buffer.isBuffer(b)) {
    const whole = Buffer.isBuffer(b) ? b : Buffer.from(b, 'utf8');
    part = whole.subarray(0, Math.floor(whole.length / 2));
  } else if (b !== undefined) part = b[Symbol.iterator]().next().value ?? '';
  const bytes = Buffer.isBuffer(part) ? part : Buffer.from(part, 'utf8');
  // Sync flush: the compressed bytes so far, with no gzip trailer (the stream is cut, not ended).
  const wireBytes = wire.gzip ? gzipSync(bytes, { ...GZIP, finishFlush: constants.Z_SYNC_FLUSH }) : bytes;
  res.writeHead(
    primed.status,
    wire.gzip
      ? gzipHeaders(primed)
      : { 'content-type': 'application/json; charset=utf-8', ...primed.headers },
  );
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
  const raw = bodyBuffer(reply);
  const body = wire.gzip ? gzipSync(raw, GZIP) : raw;
  res.writeHead(reply.status, {
    ...(wire.gzip
      ? gzipHeaders(reply)
      : { ...reply.headers, 'content-type': 'application/json; charset=utf-8' }),
    'content-length': body.length,
  });
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
