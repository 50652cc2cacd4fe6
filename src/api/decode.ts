// Reading a response body: decompressed while it streams in (Content-Encoding), capped in
// decompressed bytes so neither a huge body nor a small zip bomb can exhaust memory.
import { once } from 'node:events';
import type { Transform } from 'node:stream';
import type { BigBodyWait } from './big-bodies.js';
import { excerptOf } from './body.js';
import { ApiResponseError } from './errors.js';
import { BODY_MB, decoderFor, readOrStream, written, type ContentCoding } from './stream-body.js';

export type { ContentCoding } from './stream-body.js';

/**
 * The coding a Content-Encoding header names, or `{ unsupported }` with the header's text. A list
 * of several codings (other than identity) is not supported: no server applies two.
 */
export function contentCoding(
  header: string | string[] | undefined,
): ContentCoding | { unsupported: string } {
  const text = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim();
  const codings = text
    .toLowerCase()
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && s !== 'identity');
  if (codings.length === 0) return 'identity';
  if (codings.length > 1) return { unsupported: text };
  switch (codings[0]) {
    case 'gzip':
    case 'x-gzip':
      return 'gzip';
    case 'deflate':
      return 'deflate';
    case 'br':
      return 'br';
    default:
      return { unsupported: text };
  }
}

/** How a read ended: the decoded body, too big (its first chunk), or a stream that does not decode. */
export type BodyRead =
  | { readonly kind: 'ok'; readonly body: Buffer }
  | { readonly kind: 'too-large'; readonly head: Buffer }
  | { readonly kind: 'corrupt'; readonly raw: Buffer; readonly detail: string };

type Source = AsyncIterable<Buffer> & { destroy(): unknown };

/** An undici response: its headers, and a body that can also be dumped (read and discarded). */
interface Response {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Source & { dump(): Promise<void> };
}

export { BODY_MB } from './stream-body.js';

/**
 * Reads a response's body, decoding its Content-Encoding, up to maxBodyBytes decompressed
 * (ADOPS_MAX_BODY_MB): the worker holds a body whole, so stop reading instead of running out of
 * memory. An encoding we cannot decode, or a body over the cap, is a final ApiResponseError naming
 * the setting; a stream that does not decode comes back as `corrupt` (malformed). With `bigBody`,
 * a body reaching its size waits for it before reading on.
 */
export async function readResponse(
  res: Response,
  at: { method: string; path: string; attempt: number; status: number },
  o: { readonly maxBodyBytes: number; readonly apiKey: string },
  bigBody?: BigBodyWait,
  streamFromBytes?: number,
): Promise<Exclude<BodyRead, { kind: 'too-large' }> | { kind: 'stream'; chunks: AsyncIterable<Buffer> }> {
  if (at.status === 204 || at.status === 304) {
    await res.body.dump();
    return { kind: 'ok', body: Buffer.alloc(0) };
  }
  const coding = contentCoding(res.headers['content-encoding']);
  const fail = (problem: string, hint: string, excerpt: Buffer) =>
    new ApiResponseError({
      status: at.status,
      apiMessage: undefined,
      method: at.method,
      path: at.path,
      attempts: at.attempt,
      hint,
      retryable: false,
      problem,
      excerpt: excerptOf(excerpt, [o.apiKey]),
    });
  if (typeof coding !== 'string') {
    await res.body.dump().catch(() => undefined);
    throw fail(
      `Content-Encoding ${JSON.stringify(coding.unsupported)} is not one we decode (gzip, deflate, br)`,
      'the server compresses with a coding we do not support: set ADOPS_HTTP_COMPRESSION=none (asks for identity), and report it if that does not help',
      Buffer.alloc(0),
    );
  }
  const length = coding === 'identity' ? contentLength(res.headers['content-length']) : undefined;
  if (streamFromBytes !== undefined && at.status >= 200 && at.status < 300) {
    // A success body past streamFromBytes goes on to the caller as it arrives: never held whole.
    const sized = await readOrStream(
      res.body,
      coding,
      Math.min(streamFromBytes, o.maxBodyBytes),
      o.maxBodyBytes,
    );
    return sized.kind === 'whole' ? { kind: 'ok', body: sized.body } : sized;
  }
  const read = await readBody(res.body, coding, o.maxBodyBytes, bigBody, length);
  if (read.kind === 'too-large')
    throw fail(
      `body larger than ${o.maxBodyBytes} bytes (ADOPS_MAX_BODY_MB=${o.maxBodyBytes / BODY_MB})`,
      'raise ADOPS_MAX_BODY_MB if the worker has the memory (it holds a body whole while loading it), or ask for less per request: a shorter period or fewer dimensions',
      read.head,
    );
  return read;
}

/** A Content-Length header's value, when it is one plain number. */
function contentLength(header: string | string[] | undefined): number | undefined {
  const n = typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
  return n;
}

/**
 * Reads `source` in full, decoding `coding` as it arrives, up to `maxBytes` decoded (and as many
 * bytes on the wire). Errors of the source itself (reset, timeout) are thrown as they are: the
 * transport's. A stream that does not decode is read to its end anyway, so `raw` is the whole
 * body as received: the same broken answer then hashes the same, and can be archived. Once the
 * body reaches `big.bytes`, reading waits for `big.wait()`. An identity body of a known `length`
 * is copied into one buffer as it arrives, so its chunks are not all held until the end.
 */
export async function readBody(
  source: Source,
  coding: ContentCoding,
  maxBytes: number,
  big?: BigBodyWait,
  length?: number,
): Promise<BodyRead> {
  if (coding === 'identity') return readPlain(source, maxBytes, big, length);
  let waited = false;
  const raw: Buffer[] = [];
  let rawSize = 0;
  const out: Buffer[] = [];
  let size = 0;
  let decoder: Transform | undefined;
  let failed: Error | undefined;
  let tooLarge = false;
  const onData = (chunk: Buffer) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size <= maxBytes) {
      out.push(chunk);
      return;
    }
    // Stop inflating now: a small bomb would otherwise go on costing CPU to its end.
    tooLarge = true;
    decoder?.destroy();
  };
  for await (const chunk of source) {
    rawSize += chunk.length;
    if (rawSize > maxBytes) tooLarge = true;
    if (tooLarge) break;
    raw.push(chunk);
    if (failed !== undefined) continue;
    if (decoder === undefined) {
      decoder = decoderFor(coding, chunk);
      decoder.on('data', onData);
      decoder.on('error', (e: Error) => (failed ??= e));
    }
    // Wait until the decoder has inflated this chunk (its output counted by onData) before reading
    // the next: with Node 22's larger stream buffers write() rarely asks to wait, and a bomb would
    // be read to its end before its first output is counted.
    await written(decoder, chunk);
    if (tooLarge) break;
    if (big !== undefined && !waited && Math.max(size, rawSize) >= big.bytes) {
      waited = true;
      await big.wait();
    }
  }
  if (tooLarge) {
    source.destroy();
    decoder?.destroy();
    return { kind: 'too-large', head: out[0] ?? raw[0] ?? Buffer.alloc(0) };
  }
  if (decoder !== undefined && failed === undefined) {
    decoder.end();
    await settle(decoder, 'end');
  }
  if (tooLarge) {
    source.destroy();
    return { kind: 'too-large', head: out[0] ?? raw[0] ?? Buffer.alloc(0) };
  }
  if (failed !== undefined) {
    decoder?.destroy();
    return { kind: 'corrupt', raw: Buffer.concat(raw, rawSize), detail: failed.message };
  }
  // Inflated output lags the input: a body may reach the size only once the stream has ended.
  if (big !== undefined && !waited && size >= big.bytes) await big.wait();
  return { kind: 'ok', body: out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out, size) };
}

async function readPlain(
  source: Source,
  maxBytes: number,
  big: BigBodyWait | undefined,
  length: number | undefined,
): Promise<BodyRead> {
  // Announced over the cap: refuse before reading (or allocating) anything.
  if (length !== undefined && length > maxBytes) {
    const head = await firstChunk(source);
    source.destroy();
    return { kind: 'too-large', head };
  }
  // One buffer of the announced length, filled as chunks arrive; chunks beyond it (a server that
  // lies) fall back to the list.
  const whole = length !== undefined && length > 0 ? Buffer.allocUnsafe(length) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let waited = false;
  for await (const chunk of source) {
    if (size + chunk.length > maxBytes) {
      source.destroy();
      return { kind: 'too-large', head: whole?.subarray(0, Math.min(size, 640)) ?? chunks[0] ?? chunk };
    }
    if (whole !== undefined && chunks.length === 0 && size + chunk.length <= whole.length)
      chunk.copy(whole, size);
    else {
      if (whole !== undefined && chunks.length === 0) chunks.push(whole.subarray(0, size));
      chunks.push(chunk);
    }
    size += chunk.length;
    if (big !== undefined && !waited && size >= big.bytes) {
      waited = true;
      await big.wait();
    }
  }
  if (whole !== undefined && chunks.length === 0) return { kind: 'ok', body: whole.subarray(0, size) };
  return { kind: 'ok', body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) };
}

/** The first chunk of a body (or an empty buffer), for the excerpt of an error. */
async function firstChunk(source: Source): Promise<Buffer> {
  for await (const chunk of source) return chunk;
  return Buffer.alloc(0);
}

/** Resolves on `event`, or when the stream fails or closes (the failure is recorded by its listener). */
async function settle(stream: Transform, event: 'drain' | 'end'): Promise<void> {
  const ac = new AbortController();
  try {
    await Promise.race([
      once(stream, event, { signal: ac.signal }),
      once(stream, 'close', { signal: ac.signal }),
      // `once` rejects on 'error'; the decoder's own listener has recorded it already.
      once(stream, 'error', { signal: ac.signal }).catch(() => undefined),
    ]).catch(() => undefined);
  } finally {
    ac.abort();
  }
}
