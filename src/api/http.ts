// The API client's transport: requests over a keep-alive pool, retried with backoff, 429s by Retry-After.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import type { Logger } from '../platform/log/logger.js';
import { matcherOf, type SecretMatcher } from '../platform/log/secret-pattern.js';
import { readResponse } from './body.js';
import {
  apiHttpError,
  apiTransportError,
  hintFor,
  rateLimitedError,
  transportHint,
  type AccountSettings,
  ApiError,
} from './errors.js';
import { apiMessageOf, malformedAnswer, type BodyCheck } from './malformed.js';
import {
  backoffDelay,
  MAX_TIMER_MS,
  errorCode,
  isTransientNetwork,
  isTransientStatus,
} from '../platform/retry/classify.js';

const RETRY_AFTER_MARGIN_MS = 25;

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One finished attempt, for metrics. Never carries headers or the key. */
export interface AttemptInfo {
  method: string;
  path: string;
  attempt: number;
  status?: number;
  error?: string;
  durationMs: number;
  /** A success whose usage headers say the budget is spent: the ms until it resets (exhaustedFor). */
  exhaustedForMs?: number;
}

/** Longest pause a usage header may ask for: a reset further away is taken as a clock mix-up. */
const MAX_USAGE_PAUSE_MS = 5 * 60_000;

/** ms until the budget resets when the usage headers ((X-)RateLimit-*) say none is left; else undefined. */
export function exhaustedFor(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = (name: string) => headerText(headers[`x-ratelimit-${name}`] ?? headers[`ratelimit-${name}`]);
  const remaining = value('remaining');
  if (remaining === undefined || !/^\s*0\s*$/.test(remaining)) return undefined;
  const reset = Number(value('reset'));
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  return Math.min(MAX_USAGE_PAUSE_MS, Math.ceil(reset * 1000));
}

/** A client's transport settings; the defaults (ApiClientOptions leaves them out) are in client.ts. */
export interface TransportOptions {
  baseUrl: string; // Base URL ending in /v2.
  apiKey: string;
  auth: 'bearer' | 'x-api-key';
  connectTimeoutMs: number;
  headersTimeoutMs: number; // Time to the response headers (a big report can take the server a while).
  bodyTimeoutMs: number; // Longest silence between body chunks.
  /** Deadline of one attempt to its body's last byte (a dripping server never trips bodyTimeoutMs). */
  requestTimeoutMs: number;
  attempts: number; // Requests per call, the first included.
  baseBackoffMs: number;
  maxBackoffMs: number;
  maxRetryAfterMs: number; // Longest Retry-After we sleep through; a longer one raises RateLimitedError.
  /** Cap on a Retry-After (ADOPS_MAX_RETRY_AFTER_SECONDS): a longer one is cut to it, with a warning. */
  retryAfterCapMs: number;
  connections: number;
  /** Largest response body accepted, decompressed (ADOPS_MAX_BODY_MB); more fails the request. */
  maxBodyBytes: number;
  compression: 'gzip' | 'none'; // 'gzip': ask for gzip, decompress while streaming; 'none': ask for identity.
  on429: 'wait' | 'throw'; // 'wait' sleeps Retry-After then retries; 'throw' raises RateLimitedError at once.
  logger: Logger | undefined;
  onAttempt: ((a: AttemptInfo) => void) | undefined;
  /** Awaited before every attempt, retries included (e.g. a shared rate limit across workers). */
  beforeRequest: (() => Promise<void>) | undefined;
  /** Waits between attempts; may return early when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  /** Ends every request when it aborts, as a call's own signal does (a sync's shutdown deadline). */
  signal: AbortSignal | undefined;
  /** The accounts-file entry these settings come from, named by hints; undefined: the environment's. */
  settings: AccountSettings | undefined;
}

/** A successful (2xx) response, body read in full, or (past streamFromBytes) streaming in. */
export interface HttpResponse {
  status: number;
  body: Buffer;
  /** The decoded body as it arrives, when it was too big to read whole first (`body` is then empty). */
  stream?: AsyncIterable<Buffer>;
  attempts: number;
  durationMs: number;
}

/** Sends requests over the origin's pool, retrying 5xx, resets, timeouts, 429s and new malformed 2xx. */
export class Transport {
  private readonly pool: Pool;
  private readonly release: () => Promise<void>;
  private readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly secrets: SecretMatcher | undefined;

  constructor(private readonly o: TransportOptions) {
    this.secrets = matcherOf([o.apiKey]);
    const url = new URL(o.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    const { pool, release } = acquirePool(url.origin, o);
    this.pool = pool;
    this.release = release;
    this.headers = {
      accept: 'application/json',
      'user-agent': 'adops-export',
      // Without the header any coding is acceptable (RFC 9110), so `none` asks for identity.
      'accept-encoding': o.compression === 'gzip' ? 'gzip' : 'identity',
      ...(o.auth === 'bearer' ? { authorization: `Bearer ${o.apiKey}` } : { 'x-api-key': o.apiKey }),
    };
  }

  /** The path as requested from the server (base path included), for messages. */
  fullPath(path: string): string {
    return this.basePath + path;
  }

  /** One logical request; resolves only on a 2xx whose body passes `check` (else it is malformed). */
  async send(
    method: Method,
    path: string,
    json?: unknown,
    callSignal?: AbortSignal,
    check?: BodyCheck,
    streamFromBytes?: number,
  ): Promise<HttpResponse> {
    const o = this.o;
    const signal = callSignal ?? o.signal;
    const fullPath = this.fullPath(path);
    const body = json === undefined ? undefined : JSON.stringify(json);
    const headers =
      body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' };
    const started = performance.now();
    const transportError = (
      attempts: number,
      code: string | undefined,
      detail: string,
      cause: unknown,
      status?: number,
    ) => {
      const aborted = code === 'ABORTED';
      return apiTransportError({
        status,
        method,
        path: fullPath,
        attempts,
        hint: aborted
          ? 'the caller stopped the request (shutdown); it can run again later'
          : transportHint(o.settings),
        // An abort is not the API's fault: a later run may succeed.
        retryable: aborted || isTransientNetwork(code, method),
        code,
        detail,
        cause,
      });
    };
    const aborted = (attempt: number, cause?: unknown) =>
      transportError(attempt, 'ABORTED', 'aborted by the caller', cause);
    /** Digest of the previous answer when it was malformed: the same again fails for good. */
    let lastMalformed: string | undefined;
    for (let attempt = 1; ; attempt++) {
      if (isAborted(signal)) throw aborted(attempt - 1);
      if (o.beforeRequest !== undefined) await o.beforeRequest();
      const t0 = performance.now();
      const finished = (facts: Omit<AttemptInfo, 'method' | 'path' | 'attempt' | 'durationMs'>) =>
        o.onAttempt?.({ method, path: fullPath, attempt, ...facts, durationMs: performance.now() - t0 });
      let status: number;
      let responseHeaders: Record<string, string | string[] | undefined>;
      let read: Awaited<ReturnType<typeof readResponse>>;
      const deadline = new Deadline(o.requestTimeoutMs);
      try {
        const res = await this.pool.request({
          method,
          path: fullPath,
          headers,
          body,
          signal: signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]),
        });
        status = res.statusCode;
        responseHeaders = res.headers;
        read = await readResponse(
          res,
          { method, path: fullPath, attempt, status },
          { maxBodyBytes: o.maxBodyBytes, secrets: this.secrets },
          streamFromBytes,
        );
      } catch (error) {
        deadline.clear();
        if (error instanceof ApiError && error.name === 'ApiResponseError') throw error;
        if (isAborted(signal)) throw aborted(attempt, error);
        lastMalformed = undefined;
        const code = deadline.fired ? DEADLINE_CODE : errorCode(error);
        finished({ error: code ?? 'error' });
        const failed = transportError(
          attempt,
          code,
          deadline.fired ? deadline.detail : error instanceof Error ? error.message : String(error),
          error,
        );
        await this.retryOrThrow(failed, code, signal);
        continue;
      }
      if (read.kind === 'stream') {
        // Too big to check first: the parser judges it as it streams; the deadline runs to its last byte.
        finished({ status });
        const durationMs = performance.now() - started;
        const late = (cause: unknown) =>
          transportError(attempt, DEADLINE_CODE, deadline.detail, cause, status);
        const stream = deadline.guard(read.chunks, () => isAborted(signal), late);
        return { status, body: Buffer.alloc(0), stream, attempts: attempt, durationMs };
      }
      deadline.clear();
      if (status >= 200 && status < 300) {
        const problem =
          read.kind === 'corrupt'
            ? `a ${String(responseHeaders['content-encoding'])} body that does not decompress (${read.detail})`
            : check?.(read.body, headerText(responseHeaders['content-type']));
        const exhausted = exhaustedFor(responseHeaders);
        finished({
          status,
          ...(problem === undefined ? {} : { error: 'malformed' }),
          ...(exhausted === undefined ? {} : { exhaustedForMs: exhausted }),
        });
        if (problem === undefined && read.kind === 'ok')
          return { status, body: read.body, attempts: attempt, durationMs: performance.now() - started };
        const raw = read.kind === 'corrupt' ? read.raw : read.body;
        const malformed = malformedAnswer(raw, problem ?? 'malformed', lastMalformed, {
          status,
          method,
          path: fullPath,
          attempts: attempt,
          secrets: this.secrets,
        });
        lastMalformed = malformed.sha256;
        await this.retryOrThrow(malformed, 'malformed', signal);
        continue;
      }
      lastMalformed = undefined;
      finished({ status });
      // An error body that does not decompress still fails with its status, just without a message.
      const details = {
        status,
        apiMessage: apiMessageOf(read.kind === 'ok' ? read.body : Buffer.alloc(0), this.secrets),
        method,
        path: fullPath,
        attempts: attempt,
        hint: hintFor(status, method, fullPath, o.settings),
        // POST is not idempotent: a 5xx may have come after the campaign was created.
        retryable: status === 429 || (isTransientStatus(status) && method !== 'POST'),
      };
      if (status === 429) {
        const asked = this.retryAfter(responseHeaders['retry-after'], method, fullPath);
        // A margin: timers may fire early and the server's clock ticks in seconds, so exact can be too early.
        const wait = asked === undefined ? this.retryDelay(attempt) : asked + RETRY_AFTER_MARGIN_MS;
        const limited = rateLimitedError({ ...details, retryAfterMs: wait });
        if (o.on429 === 'throw' || wait > o.maxRetryAfterMs) throw limited;
        await this.retryOrThrow(limited, '429', signal, wait);
        continue;
      }
      await this.retryOrThrow(apiHttpError(details), String(status), signal);
    }
  }

  /** A 429's Retry-After in ms, cut to retryAfterCapMs: a date in 2100 would hold the account that long. */
  private retryAfter(value: string | string[] | undefined, method: string, path: string): number | undefined {
    const asked = parseRetryAfter(value, Date.now());
    const cap = this.o.retryAfterCapMs;
    if (asked === undefined || asked <= cap) return asked;
    this.o.logger?.warn(
      { method, path, retryAfter: headerText(value), askedMs: asked, cappedMs: cap },
      'Retry-After capped at ADOPS_MAX_RETRY_AFTER_SECONDS',
    );
    return cap;
  }

  /** The wait before another attempt after `attempt` failed: the one backoff, with this client's bounds. */
  private retryDelay(attempt: number): number {
    return backoffDelay(attempt, { baseMs: this.o.baseBackoffMs, maxMs: this.o.maxBackoffMs }, this.o.random);
  }

  /** Throws `e` when it is final or the attempts are spent; otherwise waits `ms` (or the backoff). */
  private async retryOrThrow(
    e: ApiError,
    why: string | undefined,
    signal: AbortSignal | undefined,
    ms?: number,
  ): Promise<void> {
    if (!e.retryable || e.attempts >= this.o.attempts) throw e;
    ms ??= this.retryDelay(e.attempts);
    this.o.logger?.warn(
      { method: e.method, path: e.path, attempt: e.attempts, reason: why, retryInMs: ms },
      'API request failed, retrying',
    );
    await this.o.sleep(ms, signal);
  }

  /** Lets go of the shared pool; the last client of an origin closes it (requests in flight finish). */
  async close(): Promise<void> {
    await this.release();
  }
}

/** The code of an ApiTransportError for a request that outlived ADOPS_HTTP_REQUEST_TIMEOUT_MS. */
export const DEADLINE_CODE = 'REQUEST_DEADLINE';

/** One attempt's deadline: undici's body timeout is per chunk, so a dripping server holds it for ever. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly ms: number) {
    this.timer = setTimeout(() => this.controller.abort(new Error(this.detail)), Math.min(ms, MAX_TIMER_MS));
    // The request's own socket keeps the process alive while it runs; the timer need not.
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get fired(): boolean {
    return this.controller.signal.aborted;
  }

  get detail(): string {
    return `the answer was not complete within ${this.ms} ms (ADOPS_HTTP_REQUEST_TIMEOUT_MS)`;
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  /** `chunks` under the deadline: a failure once it fired is `late(cause)`, unless the caller aborted. */
  async *guard(
    chunks: AsyncIterable<Buffer>,
    callerAborted: () => boolean,
    late: (cause: unknown) => Error,
  ): AsyncGenerator<Buffer> {
    try {
      yield* chunks;
    } catch (error) {
      throw this.fired && !callerAborted() ? late(error) : error;
    } finally {
      this.clear();
    }
  }
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A function, not `signal?.aborted` inline: TypeScript would keep a narrowing across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** The default sleep: ends early (without error) when `signal` aborts; at most MAX_TIMER_MS. */
export async function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(Math.min(ms, MAX_TIMER_MS), undefined, signal === undefined ? undefined : { signal });
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'AbortError') throw error;
  }
}

/** ms a Retry-After asks to wait (delta-seconds or an HTTP date), never negative; undefined if unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  // An HTTP date names its day and month; without letters Date.parse would read '-1' as a year.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Pool settings; clients asking for the same origin and settings share one pool. */
export type PoolSettings = Pick<
  TransportOptions,
  'connections' | 'connectTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs'
>;

const shared = new Map<string, { pool: Pool; users: number }>();

/** The process's shared keep-alive pool for `origin` and settings; `release` closes it after the last user. */
function acquirePool(origin: string, s: PoolSettings): { pool: Pool; release(): Promise<void> } {
  const key = `${origin}|${s.connections}|${s.connectTimeoutMs}|${s.headersTimeoutMs}|${s.bodyTimeoutMs}`;
  let entry = shared.get(key);
  if (entry === undefined) {
    const pool = new Pool(origin, {
      connections: s.connections,
      connectTimeout: s.connectTimeoutMs,
      headersTimeout: s.headersTimeoutMs,
      bodyTimeout: s.bodyTimeoutMs,
    });
    entry = { pool, users: 0 };
    shared.set(key, entry);
  }
  entry.users++;
  const held = entry;
  let released = false;
  return {
    pool: held.pool,
    release: async () => {
      if (released) return;
      released = true;
      held.users--;
      if (held.users > 0) return;
      if (shared.get(key) === held) shared.delete(key);
      await held.pool.close();
    },
  };
}
