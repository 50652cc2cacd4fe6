// Secret redaction: a key replaced by [REDACTED] in text, bodies (a chunk at a time, across chunk
// boundaries), errors and their causes, however a server escapes or encodes it.
import { matcherOf, MIN_SECRET, type SecretMatcher } from './secret-pattern.js';

export const REDACTED = '[REDACTED]';

const REDACTED_BYTES = Buffer.from(REDACTED, 'utf8');

/** The secrets to redact, or their matcher: building one takes ms, so long-lived holders build it once. */
export type Secrets = readonly string[] | SecretMatcher | undefined;

export function matcherFrom(secrets: Secrets): SecretMatcher | undefined {
  return secrets === undefined || 'text' in secrets ? secrets : matcherOf(secrets);
}

const WINDOW = 1 << 20; // Bytes of a body searched at once: a long body is read as text a window at a time.

/** Replaces each secret of MIN_SECRET chars or more in `text` with [REDACTED], however written. */
export function redactSecrets(text: string, secrets: Secrets): string {
  const m = matcherFrom(secrets);
  if (m === undefined || !(ESCAPE.test(text) || m.plainText.some((p) => text.includes(p)))) return text;
  return text.replace(m.text, REDACTED);
}

/** A character some escape starts with: text without one holds a secret only as is. */
const ESCAPE = /[%\\+]/;

/** redactSecrets for text cut from a longer one: the start of a writing the cut split is redacted too
 * when it is 4 characters or more (shorter ones match ordinary text). */
export function redactCut(text: string, secrets: Secrets): string {
  const m = matcherFrom(secrets);
  if (m === undefined) return text;
  const out = text.replace(m.text, REDACTED);
  const tail = out.slice(-(m.longestText - 1));
  const cut = m.prefix().exec(tail)?.[0].length ?? 0;
  return cut < MIN_SECRET ? out : out.slice(0, out.length - cut) + REDACTED;
}

/** redactSecrets for a body: the same Buffer when no secret occurs (a few native searches, no copy). */
export function redactBuffer(body: Buffer, secrets: Secrets): Buffer {
  const m = matcherFrom(secrets);
  if (m === undefined) return body;
  const { hits } = scan(body, m, true);
  return hits.length === 0 ? body : replaced(body, hits, body.length);
}

/** Redacts a body chunk by chunk, keeping back a tail (longest writing - 1 bytes) in case a secret runs
 * on into the next chunk: the chunks out, joined, are redactBuffer of the chunks in, joined. */
export class ChunkRedactor {
  private readonly matcher: SecretMatcher | undefined;
  /** The bytes not yet let out, as received: a secret may start in them. */
  private carry: Buffer = Buffer.alloc(0);
  /** Secrets replaced so far. */
  redactions = 0;

  constructor(secrets: Secrets) {
    this.matcher = matcherFrom(secrets);
  }

  /** The redacted bytes that can be let out now. */
  push(chunk: Buffer): Buffer {
    if (this.matcher === undefined) return chunk;
    const joined = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const { hits, done } = scan(joined, this.matcher, false);
    this.carry = Buffer.from(joined.subarray(done));
    this.redactions += hits.length / 2;
    return replaced(joined, hits, done);
  }

  /** The tail kept back, at the body's end. */
  end(): Buffer {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    if (this.matcher === undefined) return rest;
    const { hits } = scan(rest, this.matcher, true);
    this.redactions += hits.length / 2;
    return replaced(rest, hits, rest.length);
  }
}

/** Redacts the message and stack of `error` and its causes in place, so it keeps its class (BullMQ tells
 * UnrecoverableError and its own signals apart by class). */
export function redactError<E>(error: E, secrets: Secrets): E {
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && depth < 8; depth++, e = e.cause) {
    const message = redactSecrets(e.message, secrets);
    if (message !== e.message)
      Object.defineProperty(e, 'message', { value: message, writable: true, configurable: true });
    if (e.stack !== undefined) {
      const stack = redactSecrets(e.stack, secrets);
      if (stack !== e.stack)
        Object.defineProperty(e, 'stack', { value: stack, writable: true, configurable: true });
    }
  }
  return error;
}

/** Where the secrets are in `body` ([start, end) pairs), and `done`: the bytes up to it are decided. Without
 * `final` a secret starting in the last longest-1 bytes might run on, so the scan stops before it. */
function scan(body: Buffer, m: SecretMatcher, final: boolean): { hits: number[]; done: number } {
  const hits: number[] = [];
  const hold = m.longestBytes - 1;
  const step = Math.max(WINDOW, 4 * m.longestBytes);
  let from = 0;
  for (;;) {
    const end = Math.min(body.length, from + step);
    const last = end === body.length;
    // Writings starting before `limit` lie wholly inside the window: the window decides them.
    const limit = last && final ? end : end - hold;
    if (limit <= from) return { hits, done: from };
    let next = limit;
    const window = body.subarray(from, end);
    for (const [a, b] of regions(window, m)) {
      if (from + a >= limit) break;
      const text = window.toString('latin1', a, b);
      const re = m.bytes;
      re.lastIndex = 0;
      for (let hit = re.exec(text); hit !== null; hit = re.exec(text)) {
        const start = from + a + hit.index;
        if (start >= limit) break;
        hits.push(start, start + hit[0].length);
        next = Math.max(next, start + hit[0].length);
      }
    }
    if (last) return { hits, done: next };
    from = next;
  }
}

/** The stretches of `window` that may hold a writing of a secret (around each plain secret and each escape
 * writing a character of one), found by native searches: the usual body is never read as text. */
function regions(window: Buffer, m: SecretMatcher): Array<[number, number]> {
  const seeds: number[] = [];
  for (const byte of m.escapeBytes)
    for (let at = window.indexOf(byte); at >= 0; at = window.indexOf(byte, at + 1))
      if (m.escapes(window, at)) seeds.push(at);
  for (const plain of m.plain)
    for (let at = window.indexOf(plain); at >= 0; at = window.indexOf(plain, at + 1)) seeds.push(at);
  if (seeds.length === 0) return [];
  seeds.sort((x, y) => x - y);
  const reach = m.longestBytes;
  const out: Array<[number, number]> = [];
  for (const seed of seeds) {
    const a = Math.max(0, seed - reach + 1);
    const b = Math.min(window.length, seed + reach);
    const lastRegion = out[out.length - 1];
    if (lastRegion !== undefined && a <= lastRegion[1]) lastRegion[1] = Math.max(lastRegion[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** `body` up to `done`, each hit (pairs from scan) replaced by [REDACTED]. */
function replaced(body: Buffer, hits: readonly number[], done: number): Buffer {
  if (hits.length === 0) return body.subarray(0, done);
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < hits.length; i += 2) {
    parts.push(body.subarray(from, hits[i]), REDACTED_BYTES);
    from = hits[i + 1] as number;
  }
  parts.push(body.subarray(from, done));
  return Buffer.concat(parts);
}

/** `processor` with its thrown errors passed through redactError (so BullMQ still tells them apart). */
export function withRedactedErrors<A extends unknown[], R>(
  secrets: Secrets,
  processor: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  const m = matcherFrom(secrets);
  return async (...args) => {
    try {
      return await processor(...args);
    } catch (error) {
      throw redactError(error, m);
    }
  };
}
