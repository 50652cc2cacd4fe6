// A response body that may be too big to hold: read whole while it is small, and handed on as a
// stream of decoded chunks once it passes a size, so the caller (the loader) can take it as it
// arrives and memory stays flat whatever the report's size.
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { AdopsError } from '../retry/errors.js';

/** The content codings we decode. We ask only for gzip; the others cost nothing to accept. */
export type ContentCoding = 'identity' | 'gzip' | 'deflate' | 'br';

/** Bytes in one MB of ADOPS_MAX_BODY_MB. */
export const BODY_MB = 1_000_000;

type Source = AsyncIterable<Buffer> & { destroy(): unknown };

/** A body read whole, or the stream of the rest of it after its first bytes. */
export type SizedRead =
  | { readonly kind: 'whole'; readonly body: Buffer }
  | { readonly kind: 'corrupt'; readonly raw: Buffer; readonly detail: string }
  | { readonly kind: 'stream'; readonly chunks: AsyncIterable<Buffer> };

/** Thrown by a stream whose body passes maxBytes decoded, or whose coding stops decoding. */
export class StreamedBodyError extends AdopsError {
  override readonly name = 'StreamedBodyError';
  constructor(
    message: string,
    /** Too large is final; a stream that stops decoding is worth another try. */
    retryable: boolean,
  ) {
    super(message, {}, retryable);
  }
}

/**
 * Reads `source` (decoding `coding`) whole if it ends before `fromBytes` decoded bytes; else
 * returns a stream of its decoded chunks, the ones already read first, which reads the source only
 * as fast as it is consumed. Up to `maxBytes` decoded: beyond, the stream throws. A body that does
 * not decode before it turns into a stream comes back `corrupt`, with the raw bytes read.
 */
export async function readOrStream(
  source: Source,
  coding: ContentCoding,
  fromBytes: number,
  maxBytes: number,
): Promise<SizedRead> {
  const it = source[Symbol.asyncIterator]();
  const decoded: Buffer[] = [];
  let failed: Error | undefined;
  let decoder: Transform | undefined;
  let ended = false;
  /** The raw bytes, kept while the body may still turn out corrupt before it streams. */
  let raw: Buffer[] | undefined = [];

  /** The next decoded chunks, [] when a raw chunk gave none yet; undefined at the end. */
  async function next(): Promise<Buffer[] | undefined> {
    if (ended) return undefined;
    const step = await it.next();
    if (step.done === true) {
      ended = true;
      if (decoder === undefined) return undefined;
      await new Promise<void>((resolve) => {
        (decoder as Transform).once('end', resolve);
        (decoder as Transform).once('close', resolve);
        (decoder as Transform).end();
      });
      return failed === undefined ? decoded.splice(0) : undefined;
    }
    raw?.push(step.value);
    if (coding === 'identity') return [step.value];
    if (decoder === undefined) {
      decoder = decoderFor(coding, step.value);
      decoder.on('data', (out: Buffer) => decoded.push(out));
      decoder.on('error', (e: Error) => (failed ??= e));
    }
    await written(decoder, step.value);
    return decoded.splice(0);
  }

  const head: Buffer[] = [];
  let size = 0;
  for (;;) {
    let out: Buffer[] | undefined;
    try {
      out = await next();
    } catch (error) {
      source.destroy();
      throw error;
    }
    if (failed !== undefined) {
      // Read on to the end, so the broken answer can be hashed and archived whole (as readBody does).
      // Up to the cap: past it, what was read is archive enough.
      let rawBytes = (raw ?? []).reduce((n, b) => n + b.length, 0);
      for (;;) {
        const step = await it.next();
        if (step.done === true) break;
        rawBytes += step.value.length;
        if (rawBytes > maxBytes) {
          source.destroy();
          break;
        }
        raw?.push(step.value);
      }
      return { kind: 'corrupt', raw: Buffer.concat(raw ?? []), detail: failed.message };
    }
    if (out === undefined) return { kind: 'whole', body: Buffer.concat(head, size) };
    for (const chunk of out) {
      head.push(chunk);
      size += chunk.length;
    }
    if (size >= fromBytes) break;
  }
  raw = undefined;

  async function* rest(): AsyncGenerator<Buffer> {
    let whole = false;
    try {
      yield* head.splice(0);
      for (;;) {
        const out = await next();
        if (failed !== undefined)
          throw new StreamedBodyError(`the body stopped decoding part way: ${failed.message}`, true);
        if (out === undefined) {
          whole = true;
          return;
        }
        for (const chunk of out) {
          size += chunk.length;
          if (size > maxBytes)
            throw new StreamedBodyError(
              `body larger than ${maxBytes} bytes (ADOPS_MAX_BODY_MB=${maxBytes / BODY_MB}): raise it, or ask for less per request: a shorter period or fewer dimensions`,
              false,
            );
          yield chunk;
        }
      }
    } finally {
      if (!whole) {
        source.destroy();
        decoder?.destroy();
      }
    }
  }
  return { kind: 'stream', chunks: rest() };
}

/**
 * A decoder for `coding`. "deflate" should be a zlib stream (RFC 9110), but some servers send raw
 * deflate: the first bytes tell (a zlib header is CM 8 with a check that is a multiple of 31).
 */
export function decoderFor(coding: Exclude<ContentCoding, 'identity'>, first: Buffer): Transform {
  if (coding === 'gzip') return createGunzip();
  if (coding === 'br') return createBrotliDecompress();
  const b0 = first[0] ?? 0;
  const b1 = first[1] ?? 0;
  const zlibHeader = (b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0;
  return zlibHeader ? createInflate() : createInflateRaw();
}

/** Resolves once `decoder` has processed `chunk` (or failed, or was destroyed). */
export function written(decoder: Transform, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      decoder.off('close', done);
      resolve();
    };
    decoder.once('close', done);
    decoder.write(chunk, done);
  });
}
