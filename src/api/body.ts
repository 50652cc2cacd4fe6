// The one body reader: decoded as it streams, capped in decoded bytes (no zip bomb), streamed past a size.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw, gunzipSync } from 'node:zlib';
import { ChunkRedactor, redactBuffer, type Secrets } from '../platform/log/redact.js';
import { TerminalError, TransientError } from '../platform/retry/errors.js';
import { apiResponseError } from './errors.js';
import { excerptOf } from './malformed.js';
import { joined } from '../flatten/parse.js';

/** The content codings we decode. We ask only for gzip; the others cost nothing to accept. */
export type ContentCoding = 'identity' | 'gzip' | 'deflate' | 'br';

export const BODY_MB = 1_000_000; // Bytes in one MB of ADOPS_MAX_BODY_MB and ADOPS_STREAM_BODY_MB.

/** A gzip body this small is decoded in one call: a streaming decoder's thread-pool trips cost more. */
const ONE_SHOT_RAW_BYTES = 16 * 1024;

/** The coding a Content-Encoding header names, or `{ unsupported }` (also for two: no server applies two). */
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
  const [only] = codings;
  const coding = codings.length === 1 && only !== undefined ? CODINGS.get(only) : undefined;
  return coding ?? { unsupported: text };
}

const CODINGS = new Map<string, ContentCoding>([
  ['gzip', 'gzip'],
  ['x-gzip', 'gzip'],
  ['deflate', 'deflate'],
  ['br', 'br'],
]);

/** How a read ended: whole, too big, corrupt (raw bytes to the cap: a repeat hashes alike), streaming. */
export type BodyRead =
  | { readonly kind: 'ok'; readonly body: Buffer }
  | { readonly kind: 'too-large'; readonly head: Buffer }
  | { readonly kind: 'corrupt'; readonly raw: Buffer; readonly detail: string }
  | { readonly kind: 'stream'; readonly chunks: AsyncIterable<Buffer> };

type Source = AsyncIterable<Buffer> & { destroy(): unknown };

/** Reads `source` decoded, whole below `streamFrom`, else streaming: TerminalError past `maxBytes`. */
export async function readBody(
  source: Source,
  coding: ContentCoding,
  maxBytes: number,
  options: { readonly length?: number; readonly streamFrom?: number } = {},
): Promise<BodyRead> {
  if (options.length !== undefined && options.length > maxBytes) {
    const first = await source[Symbol.asyncIterator]().next();
    source.destroy();
    return { kind: 'too-large', head: first.done === true ? Buffer.alloc(0) : first.value };
  }
  const streamFrom = Math.min(options.streamFrom ?? Infinity, maxBytes);
  const it = source[Symbol.asyncIterator]();
  let decoder: Transform | undefined;
  let failed: Error | undefined;
  const decoded: Buffer[] = [];
  /** Decoded bytes so far; past maxBytes the decoder stops at once (a small bomb costs no more). */
  let size = 0;
  let rawSize = 0;
  let tooLarge = false;
  let ended = false;
  /** The raw bytes, kept while the body may still turn out corrupt before it streams. */
  let raw: Buffer[] | undefined = [];
  const stop = () => {
    source.destroy();
    decoder?.destroy();
  };

  /** The next decoded chunks ([] when a raw chunk gave none yet); undefined at the end. */
  async function next(): Promise<Buffer[] | undefined> {
    if (ended) return undefined;
    const step = await it.next();
    if (step.done === true) {
      ended = true;
      if (coding === 'gzip' && decoder === undefined) return decodeAtOnce(raw ?? []);
      if (decoder !== undefined && failed === undefined) {
        decoder.end();
        await settle(decoder);
      }
      return decoded.splice(0);
    }
    rawSize += step.value.length;
    if (rawSize > maxBytes) tooLarge = true;
    if (tooLarge) return [];
    raw?.push(step.value);
    if (coding === 'identity') {
      size += step.value.length;
      tooLarge = size > maxBytes;
      return [step.value];
    }
    if (failed !== undefined) return [];
    // A gzip body may end small enough to decode in one call: its first chunks wait in `raw`.
    if (coding === 'gzip' && decoder === undefined && rawSize <= ONE_SHOT_RAW_BYTES) return [];
    const chunks = decoder === undefined ? (raw ?? [step.value]) : [step.value];
    if (decoder === undefined) {
      decoder = decoderFor(coding, chunks[0] as Buffer);
      decoder.on('data', (out: Buffer) => {
        if (tooLarge) return;
        size += out.length;
        decoded.push(out);
        if (size <= maxBytes) return;
        // Stop inflating now: a small bomb would otherwise go on costing CPU to its end.
        tooLarge = true;
        decoder?.destroy();
      });
      decoder.on('error', (e: Error) => (failed ??= e));
    }
    // Let the decoder inflate this chunk before reading on: Node 22's buffers would read a bomb to its end.
    for (const chunk of chunks) await written(decoder, chunk);
    return decoded.splice(0);
  }

  /** Decodes the whole of a small body at once; capped as the decoder is, a failure as its failure. */
  function decodeAtOnce(chunks: Buffer[]): Buffer[] {
    if (chunks.length === 0) return [];
    try {
      const out = gunzipSync(Buffer.concat(chunks), { maxOutputLength: maxBytes + 1 });
      size = out.length;
      tooLarge = size > maxBytes;
      return [out];
    } catch (error) {
      if (error instanceof RangeError) tooLarge = true;
      else failed = error instanceof Error ? error : new Error(String(error));
      return [];
    }
  }

  const head: Buffer[] = [];
  let headSize = 0;
  for (;;) {
    let out: Buffer[] | undefined;
    try {
      out = await next();
    } catch (error) {
      stop();
      throw error;
    }
    if (tooLarge) {
      stop();
      return { kind: 'too-large', head: head[0] ?? out?.[0] ?? raw?.[0] ?? Buffer.alloc(0) };
    }
    if (failed !== undefined) {
      // Read on, so the broken answer is hashed and archived whole; past the cap, what was read suffices.
      decoder?.destroy();
      for (let step = await it.next(); step.done !== true; step = await it.next()) {
        rawSize += step.value.length;
        if (rawSize > maxBytes) {
          source.destroy();
          break;
        }
        raw?.push(step.value);
      }
      return { kind: 'corrupt', raw: Buffer.concat(raw ?? []), detail: failed.message };
    }
    if (out === undefined || (ended && out.length === 0)) break;
    for (const chunk of out) head.push(chunk);
    headSize = size;
    if (headSize >= streamFrom) {
      raw = undefined;
      return { kind: 'stream', chunks: rest() };
    }
    if (ended) break;
  }
  return { kind: 'ok', body: joined(head, headSize) };

  async function* rest(): AsyncGenerator<Buffer> {
    let whole = false;
    try {
      yield* head.splice(0);
      for (;;) {
        const out = await next();
        if (failed !== undefined)
          throw new TransientError(`the body stopped decoding part way: ${failed.message}`);
        if (tooLarge)
          throw new TerminalError(
            `body larger than ${maxBytes} bytes (ADOPS_MAX_BODY_MB=${maxBytes / BODY_MB}): raise it, or ask for less per request: a shorter period or fewer dimensions`,
          );
        if (out !== undefined) yield* out;
        if (out === undefined || ended) {
          whole = true;
          return;
        }
      }
    } finally {
      if (!whole) stop();
    }
  }
}

/** readBody for the transport: an unknown encoding or a body over ADOPS_MAX_BODY_MB is a final ApiResponseError. */
export async function readResponse(
  res: {
    readonly headers: Record<string, string | string[] | undefined>;
    readonly body: Source & { dump(): Promise<void> };
  },
  at: { method: string; path: string; attempt: number; status: number },
  o: { readonly maxBodyBytes: number; readonly secrets: Secrets },
  streamFrom?: number,
): Promise<Exclude<BodyRead, { kind: 'too-large' }>> {
  if (at.status === 204 || at.status === 304) {
    await res.body.dump();
    return { kind: 'ok', body: Buffer.alloc(0) };
  }
  const coding = contentCoding(res.headers['content-encoding']);
  const fail = (problem: string, hint: string, excerpt: Buffer) =>
    apiResponseError({
      status: at.status,
      method: at.method,
      path: at.path,
      attempts: at.attempt,
      hint,
      retryable: false,
      problem,
      excerpt: excerptOf(excerpt, o.secrets),
    });
  if (typeof coding !== 'string') {
    await res.body.dump().catch(() => undefined);
    throw fail(
      `Content-Encoding ${JSON.stringify(coding.unsupported)} is not one we decode (gzip, deflate, br)`,
      'the server compresses with a coding we do not support: set ADOPS_HTTP_COMPRESSION=none (asks for identity), and report it if that does not help',
      Buffer.alloc(0),
    );
  }
  const header = res.headers['content-length'];
  const length =
    coding === 'identity' && typeof header === 'string' && /^\d{1,15}$/.test(header)
      ? Number(header)
      : undefined;
  const success = at.status >= 200 && at.status < 300;
  const read = await readBody(res.body, coding, o.maxBodyBytes, {
    ...(length === undefined ? {} : { length }),
    ...(success && streamFrom !== undefined ? { streamFrom } : {}),
  });
  if (read.kind === 'too-large')
    throw fail(
      `body larger than ${o.maxBodyBytes} bytes (ADOPS_MAX_BODY_MB=${o.maxBodyBytes / BODY_MB})`,
      'raise ADOPS_MAX_BODY_MB if the worker has the memory (it holds a body whole while loading it), or ask for less per request: a shorter period or fewer dimensions',
      read.head,
    );
  return read;
}

/** A decoder for `coding`; "deflate" may be raw deflate, not zlib: a zlib header is CM 8, check % 31 == 0. */
function decoderFor(coding: Exclude<ContentCoding, 'identity'>, first: Buffer): Transform {
  if (coding === 'gzip') return createGunzip();
  if (coding === 'br') return createBrotliDecompress();
  const b0 = first[0] ?? 0;
  const b1 = first[1] ?? 0;
  const zlibHeader = (b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0;
  return zlibHeader ? createInflate() : createInflateRaw();
}

/** Resolves once `decoder` has processed `chunk` (or failed, or was destroyed). */
function written(decoder: Transform, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      decoder.off('close', done);
      resolve();
    };
    decoder.once('close', done);
    decoder.write(chunk, done);
  });
}

/** Resolves once the decoder has ended, failed or closed (a failure is recorded by its listener). */
async function settle(stream: Transform): Promise<void> {
  const ac = new AbortController();
  try {
    await Promise.race([
      once(stream, 'end', { signal: ac.signal }),
      once(stream, 'close', { signal: ac.signal }),
      // `once` rejects on 'error'; the decoder's own listener has recorded it already.
      once(stream, 'error', { signal: ac.signal }).catch(() => undefined),
    ]).catch(() => undefined);
  } finally {
    ac.abort();
  }
}

/** A 2xx report body, decoded, redacted, read once (then its received size and SHA-256 are known). */
export class ReportBody implements AsyncIterable<Buffer> {
  private readonly hash = createHash('sha256');
  private digest: string | undefined;
  private read = false;
  private changed = false;
  receivedBytes = 0;

  constructor(
    private readonly source: Buffer | AsyncIterable<Buffer>,
    private readonly secrets: Secrets,
  ) {}

  get whole(): boolean {
    return Buffer.isBuffer(this.source);
  }

  /** Whether redaction changed any byte of what was read (a secret was in it): else the body as stored is the
   * body as received, and so is its digest. */
  get redacted(): boolean {
    return this.changed;
  }

  /** SHA-256 of the body as received: of what came, once the body has been read (or cut off). */
  get receivedSha256(): string {
    this.digest ??= this.hash.digest('hex');
    return this.digest;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    if (this.read) throw new Error('a report body is read once');
    this.read = true;
    if (Buffer.isBuffer(this.source)) {
      this.take(this.source);
      const out = redactBuffer(this.source, this.secrets);
      this.changed = out !== this.source;
      yield out;
      return;
    }
    const redactor = new ChunkRedactor(this.secrets);
    try {
      for await (const chunk of this.source) {
        this.take(chunk);
        const out = redactor.push(chunk);
        if (out.length > 0) yield out;
      }
    } catch (error) {
      // Cut off part way: what came is still let out (to the archive) before the failure.
      const tail = redactor.end();
      this.changed = redactor.redactions > 0;
      if (tail.length > 0) yield tail;
      throw error;
    }
    const tail = redactor.end();
    this.changed = redactor.redactions > 0;
    if (tail.length > 0) yield tail;
  }

  /** The whole body, redacted (`adops pull`, replay, tests): read it once, held in memory. */
  async bytes(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this) chunks.push(chunk);
    return joined(chunks);
  }

  private take(chunk: Buffer): void {
    this.hash.update(chunk);
    this.receivedBytes += chunk.length;
  }
}
