// Misbehaving on purpose: the seeded fault plan, replacement answers, X-RateLimit-* headers, echoed key.
import { EmulatorReply, type Reply } from './api/http.js';
import { createRng, mixSeed, type Rng } from './prng.js';
import type { EchoForm, EchoPlace, FaultKind, FaultOptions } from './options.js';
import { FAULT_BANDS, FAULT_OPTIONS_SCHEMA, isRecord } from './options.js';

interface FaultDecision {
  readonly kind: 'none' | (typeof FAULT_BANDS)[number][1];
  readonly latencyMs: number;
  readonly html?: boolean;
}

/** Seeded faults: each request under the fault paths draws exactly two numbers (storms too): runs repeat. */
export class FaultPlan {
  private options: FaultOptions = {};
  private rng: Rng = createRng(1);
  private stormLeft = 0;

  constructor(options: FaultOptions = {}) {
    this.set(options);
  }

  set(options: FaultOptions): void {
    this.options = FAULT_OPTIONS_SCHEMA.parse(options);
    this.rng = createRng(mixSeed(options.seed ?? 1, 0xfa17));
    this.stormLeft = 0;
  }

  get dripIntervalMs(): number {
    return this.options.dripIntervalMs ?? 2_000;
  }

  get retryAfterSeconds(): number {
    return this.options.retryAfterSeconds ?? 1;
  }

  decide(path: string): FaultDecision {
    const o = this.options;
    const paths = o.paths ?? ['/v2'];
    if (!paths.some((p) => path.startsWith(p))) return { kind: 'none', latencyMs: 0 };
    const u = this.rng.next();
    const l = this.rng.next();
    const [min, max] = typeof o.latencyMs === 'number' ? [o.latencyMs, o.latencyMs] : (o.latencyMs ?? [0, 0]);
    const latencyMs = Math.round(min + l * (max - min));
    if (this.stormLeft > 0) {
      this.stormLeft -= 1;
      return { kind: 'storm', latencyMs };
    }
    let edge = 0;
    for (const [rate, kind] of FAULT_BANDS) {
      const width = o[rate] ?? 0;
      edge += width;
      if (u >= edge) continue;
      if (kind === 'storm') this.stormLeft = (o.rateLimitStormLength ?? 5) - 1;
      // Where u falls inside the fail band decides HTML or JSON, so no extra draw is needed.
      if (kind === 'fail')
        return { kind, latencyMs, html: (u - (edge - width)) / width < (o.htmlShare ?? 1) };
      return { kind, latencyMs };
    }
    return { kind: 'none', latencyMs };
  }
}

const MALFORMED_BODY = '{"items": {"2024-01-01": {"ad_requests": 12,, <html>502 Bad Gateway</html>';

/** The page a reverse proxy (nginx here) sends when the API behind it fails: HTML, not JSON. */
export const BAD_GATEWAY_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n' +
  '<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

export function injectedReply(kind: FaultKind, html: boolean, retryAfterSeconds: number): Reply {
  if (html) return { status: 502, headers: { 'content-type': 'text/html' }, body: BAD_GATEWAY_PAGE };
  if (kind === 'fail')
    return new EmulatorReply(500, 'server_error', 'Injected server error: retry later.').toReply();
  if (kind === 'malformed') return { status: 200, body: MALFORMED_BODY };
  const headers = { 'retry-after': String(retryAfterSeconds) };
  const message = 'Too many requests: wait Retry-After seconds.';
  return new EmulatorReply(429, 'rate_limited', message, undefined, headers).toReply();
}

export const ADVERTISED_LIMIT = 600;
const WINDOW_SECONDS = 60;

/** Counts /v2 requests in one-minute windows for the X-RateLimit-* headers: advertised, never enforced. */
export class RateWindow {
  private windowStart = 0;
  private used = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one request and returns its headers; `refused` (an injected 429) shows none remaining. */
  take(refused: boolean): Record<string, string> {
    const seconds = Math.floor(this.now() / 1000);
    const start = seconds - (seconds % WINDOW_SECONDS);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.used = 0;
    }
    this.used += 1;
    return {
      'x-ratelimit-limit': String(ADVERTISED_LIMIT),
      'x-ratelimit-remaining': String(refused ? 0 : Math.max(0, ADVERTISED_LIMIT - this.used)),
      // Seconds until the window resets (the IETF RateLimit draft's form, not an epoch time).
      'x-ratelimit-reset': String(start + WINDOW_SECONDS - seconds),
    };
  }
}

// The echoKey quirk: a careless server repeats the key, so tests prove it is redacted before it is stored.

export const ECHO_HEADER = 'x-request-key';

export const ECHO_FIELD = 'request_key';

export function echoKey(
  reply: Reply,
  key: string,
  places: readonly EchoPlace[],
  form: EchoForm = 'json',
): Reply | undefined {
  let out = reply;
  let echoed = false;
  const html = /text\/html/i.test(reply.headers?.['content-type'] ?? '');
  // As it stands inside a JSON string: decoding the JSON gives the key, or its %-encoding.
  const written = keyIn(key, form);
  if (places.includes('body') && reply.status < 300 && !html) {
    const body = withField(reply.body, written);
    if (body !== undefined) [out, echoed] = [{ ...out, body }, true];
  }
  if (places.includes('error') && reply.status >= 400 && !html && typeof reply.body === 'string') {
    const body = errorWithKey(reply.body, written);
    if (body !== undefined) [out, echoed] = [{ ...out, body }, true];
  }
  const plain = form === 'json' ? key : written;
  if (places.includes('html') && html && typeof reply.body === 'string') {
    const note = `<p>Authorization: Bearer ${plain}</p>`;
    const at = reply.body.lastIndexOf('</body>');
    const body = at < 0 ? reply.body + note : reply.body.slice(0, at) + note + reply.body.slice(at);
    [out, echoed] = [{ ...out, body }, true];
  }
  if (places.includes('header'))
    [out, echoed] = [{ ...out, headers: { ...out.headers, [ECHO_HEADER]: plain } }, true];
  return echoed ? out : undefined;
}

const json = (c: string) => JSON.stringify(c).slice(1, -1);
const hex = (n: number, width: number, lower: boolean) => {
  const text = n.toString(16).padStart(width, '0');
  return lower ? text : text.toUpperCase();
};
const percent = (lower: boolean) => (c: string) =>
  [...Buffer.from(c, 'utf8')].map((b) => `%${hex(b, 2, lower)}`).join('');
const unicode = (lower: boolean) => (c: string) =>
  Array.from({ length: c.length }, (_, i) => `\\u${hex(c.charCodeAt(i), 4, lower)}`).join('');
/** How each form writes one character; `mixed` takes the next of the first five in turn. */
const ENCODE: Record<Exclude<EchoForm, 'mixed'>, (c: string) => string> = {
  json,
  percent: percent(false),
  'percent-lower': percent(true),
  unicode: unicode(false),
  'unicode-lower': unicode(true),
  'json-slash': (c) => json(c).replace(/\//g, '\\/'),
};
const MIXED = ['json', 'percent', 'percent-lower', 'unicode', 'unicode-lower'] as const;

export function keyIn(key: string, form: EchoForm): string {
  return [...key].map((c, i) => ENCODE[form === 'mixed' ? MIXED[i % 5]! : form](c)).join('');
}

function withField(body: Reply['body'], key: string): Reply['body'] | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return prefixed(body.toString(), key);
  const chunks = body[Symbol.iterator]();
  const first = chunks.next();
  if (first.done === true) return undefined;
  const head = prefixed(first.value, key) ?? first.value;
  return (function* () {
    yield head;
    yield* { [Symbol.iterator]: () => chunks };
  })();
}

function prefixed(text: string, written: string): string | undefined {
  if (!text.startsWith('{')) return undefined;
  const rest = text.slice(1);
  const member = `${JSON.stringify(ECHO_FIELD)}:"${written}"`;
  return `{${member}${rest.trimStart().startsWith('}') ? '' : ','}${rest}`;
}

const KEY_MARK = '@@ECHOED_KEY@@';

function errorWithKey(body: string, written: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(doc)) return undefined;
  const message = typeof doc.message === 'string' ? doc.message : 'request refused';
  return JSON.stringify({ ...doc, message: `${message} (key ${KEY_MARK})`, [ECHO_FIELD]: KEY_MARK })
    .split(KEY_MARK)
    .join(written);
}
