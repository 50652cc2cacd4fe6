// The doctor's network shell: one small undici Pool, short timeouts, every body read or destroyed.
// It waits out 429s (Retry-After) and retries transient failures, so a busy or flaky server is not
// mistaken for a wrong setting, and notes the Date and rate-limit headers of every answer; and the
// TLS handshake on its own, for the certificate's names and expiry.
import { connect, type PeerCertificate } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import { apiMessageOf } from '../api/malformed.js';
import { readBody } from '../api/body.js';
import { parseRetryAfter } from '../api/http.js';
import { errnoCode } from '../config/files.js';
import { redactSecrets } from '../log/redact.js';
import { backoffDelay, isTransientNetwork, isTransientStatus } from '../retry/classify.js';
import type { Answer, Observations, TlsObservation } from './types.js';

/** A probe's retries: short, since a doctor should answer in seconds. */
const PROBE_BACKOFF = { baseMs: 100, maxMs: 1_000 };
/** Tries per request against 5xx, resets and dropped bodies: a flaky server still gets probed. */
const ATTEMPTS = 8;
/** 429s waited out per request: enough for a storm of them. */
const THROTTLE_RETRIES = 8;
/** A longer Retry-After is not waited for: the 429 becomes the answer. */
const MAX_RETRY_AFTER_MS = 10_000;

interface ProberOptions {
  readonly baseUrl: string;
  /** Redacted from every message kept (the API key). */
  readonly secrets: readonly string[];
  readonly connectTimeoutMs: number;
  /** For the headers, and for the body, of each request. */
  readonly timeoutMs: number;
}

/** One GET: the path relative to the base URL (query included), headers, and an optional JSON body. */
export interface ProbeRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** A body this large is no probe's answer: stop reading rather than fill memory. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Not worth retrying for a probe: nothing listens, or the server is too slow to wait for twice. */
const FINAL_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

/** Sends the probes to one API and remembers what every answer said about clock and limits. */
export class Prober {
  private readonly pool: Pool;
  private readonly basePath: string;
  // What every answer said about limits and clock: the Observations of the same names.
  readonly rateLimitHeaders: Record<string, string> = {};
  throttled = 0;
  clock: Observations['clock'];

  constructor(private readonly o: ProberOptions) {
    const url = new URL(o.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: 2,
      connectTimeout: o.connectTimeoutMs,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
  }

  /** The answer to one GET, after waiting out 429s and retrying transient failures. Never throws. */
  async send(req: ProbeRequest): Promise<Answer> {
    let failures = 0;
    let throttles = 0;
    for (;;) {
      try {
        const res = await this.pool.request({
          method: 'GET',
          path: this.basePath + req.path,
          headers: {
            accept: 'application/json',
            'user-agent': 'adops-export doctor',
            ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...req.headers,
          },
          body: req.body,
        });
        this.note(res.headers);
        // As received (not decoded); past MAX_BODY_BYTES the socket is destroyed.
        const read = await readBody(res.body, 'identity', MAX_BODY_BYTES);
        if (read.kind !== 'ok')
          throw Object.assign(new Error(`body larger than ${MAX_BODY_BYTES} bytes`), { code: 'TOO_LARGE' });
        const body = read.body;
        const status = res.statusCode;
        if (status === 429 && throttles < THROTTLE_RETRIES) {
          const wait = parseRetryAfter(res.headers['retry-after'], Date.now()) ?? 1_000;
          if (wait <= MAX_RETRY_AFTER_MS) {
            throttles++;
            this.throttled++;
            await delay(wait + 25);
            continue;
          }
        }
        if (isTransientStatus(status) && ++failures < ATTEMPTS) {
          await delay(backoffDelay(failures, PROBE_BACKOFF));
          continue;
        }
        const encoding = res.headers['content-encoding'];
        return {
          kind: 'http',
          status,
          body,
          contentEncoding: Array.isArray(encoding) ? encoding.join(', ') : encoding,
          apiMessage: status >= 300 ? apiMessageOf(body, this.o.secrets) : undefined,
        };
      } catch (error) {
        const code = errnoCode(error) ?? 'error';
        if (isTransientNetwork(code, 'GET') && !FINAL_CODES.has(code) && ++failures < ATTEMPTS) {
          await delay(backoffDelay(failures, PROBE_BACKOFF));
          continue;
        }
        return {
          kind: 'none',
          code,
          detail: redactSecrets(error instanceof Error ? error.message : String(error), this.o.secrets),
        };
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private note(headers: Record<string, string | string[] | undefined>): void {
    const date = headers.date;
    if (this.clock === undefined && typeof date === 'string')
      this.clock = { serverDate: date, localMs: Date.now() };
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && isRateLimitHeader(name))
        this.rateLimitHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
}

/** True for a header that tells about rate limits: X-RateLimit-*, RateLimit-*, Retry-After. */
export function isRateLimitHeader(name: string): boolean {
  return /^(x-)?ratelimit(-|$)/i.test(name) || /^retry-after$/i.test(name);
}

/** The TLS handshake of an https base URL on its own, for the certificate's names and expiry (the pool does
 * not show them). Undefined when not even TCP connected: that is reachability's finding. */
export function probeTls(baseUrl: string, timeoutMs: number): Promise<TlsObservation | undefined> {
  const url = new URL(baseUrl);
  const port = url.port === '' ? 443 : Number(url.port);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port, servername: url.hostname, timeout: timeoutMs });
    let connected = false;
    socket.once('connect', () => (connected = true));
    const done = (o: TlsObservation | undefined) => {
      socket.destroy();
      resolve(o);
    };
    socket.once('secureConnect', () => {
      const cert: PeerCertificate = socket.getPeerCertificate();
      done({
        ok: true,
        subject: nameOf(cert.subject) ?? url.hostname,
        issuer: nameOf(cert.issuer) ?? 'unknown issuer',
        validTo: cert.valid_to,
      });
    });
    const fail = (code: string, detail: string) => done(connected ? { ok: false, code, detail } : undefined);
    socket.once('timeout', () => fail('ETIMEDOUT', `no handshake within ${timeoutMs} ms`));
    socket.once('error', (error: NodeJS.ErrnoException) => fail(error.code ?? 'error', error.message));
  });
}

function nameOf(name: PeerCertificate['subject'] | undefined): string | undefined {
  if (name === undefined) return undefined;
  const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return pick(name.CN) ?? pick(name.O);
}
