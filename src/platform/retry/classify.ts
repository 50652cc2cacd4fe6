// The one classifier of failures (transient, rate-limited, aborted, fatal: retries are an allowlist)
// and the one backoff that times every retry.
import { AdopsError } from './errors.js';

export type Failure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly reason: string }
  /** Our own process cut the work short (shutdown): not the API's doing, nothing to record. */
  | { readonly kind: 'aborted'; readonly reason: string }
  | { readonly kind: 'transient'; readonly reason: string }
  | { readonly kind: 'fatal'; readonly reason: string };

/** HTTP statuses a later attempt can fix (429 is apart: it says when to come back). */
const TRANSIENT_STATUS: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Transport failures a later attempt can fix: resets, refusals, drops, DNS hiccups, timeouts. */
const TRANSIENT_NETWORK: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  // Our own: a request that outlived ADOPS_HTTP_REQUEST_TIMEOUT_MS (src/api/http.ts).
  'REQUEST_DEADLINE',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/** Failures where the request certainly never reached the server: safe to retry even for POST. */
const NOT_SENT: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** Postgres SQLSTATEs worth another try: 40001, 40P01, 53300, 57P01-3 and class 08 (connections). */
const TRANSIENT_PG = /^(40001|40P01|53300|57P0[1-3]|08\d\d\d)$/;

/** pg's messages when the server or the connection goes away mid-query (they carry no code). */
const PG_CONNECTION_LOST =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/i;

export function isTransientStatus(status: number): boolean {
  return TRANSIENT_STATUS.has(status);
}

/** True when a transport failure may be retried: for POST (not idempotent) only if never sent. */
export function isTransientNetwork(code: string | undefined, method = 'GET'): boolean {
  if (code === undefined) return false;
  return method === 'POST' ? NOT_SENT.has(code) : TRANSIENT_NETWORK.has(code);
}

export function isTransientPg(code: string | undefined): boolean {
  return code !== undefined && TRANSIENT_PG.test(code);
}

/** True for a serialization failure or deadlock: the Postgres errors retried on the same connection. */
export function isSerializationFailure(error: unknown): boolean {
  const code = errorCode(error);
  return code === '40001' || code === '40P01';
}

/** The string `code` of a library's error (Node's, undici's, pg's SQLSTATE), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** What the fallback reads off errors not of our vocabulary (pg's, ioredis', undici's). */
type ErrorFacts = { readonly status?: unknown; readonly code?: unknown };

/** Classifies any error: the first of ours in the cause chain says what it is (retryAfterMs: a pause);
 * library errors are judged by their codes against the allowlists; anything else is fatal. */
export function classifyFailure(error: unknown): Failure {
  const reason = failureReason(error);
  const chain = causes(error);
  if (chain[0]?.code === 'ABORTED') return { kind: 'aborted', reason };
  const ourChain = chain.filter((e): e is AdopsError => e instanceof AdopsError);
  const limited = ourChain.find((e) => e.retryAfterMs !== undefined)?.retryAfterMs;
  if (limited !== undefined) return { kind: 'rate-limited', retryAfterMs: Math.max(0, limited), reason };
  const ours = ourChain[0];
  if (ours !== undefined) return { kind: ours.retryable ? 'transient' : 'fatal', reason };
  const transient = chain.some((e) => {
    const code = typeof e.code === 'string' ? e.code : undefined;
    return (
      isTransientPg(code) ||
      isTransientNetwork(code) ||
      (typeof e.status === 'number' && isTransientStatus(e.status)) ||
      PG_CONNECTION_LOST.test(e.message)
    );
  });
  return { kind: transient ? 'transient' : 'fatal', reason };
}

/** The reason shown for a failure (failedReason, report_loads.error): name, message, hint, first cause. */
export function failureReason(error: unknown): string {
  if (!(error instanceof Error)) return `Error: ${String(error)}`;
  // Ours carry a typed hint; another library's error may carry one too (the fallback).
  const e = error as Error & { hint?: unknown };
  let text = `${e.name}: ${e.message}`;
  if (typeof e.hint === 'string' && e.hint !== '' && !e.message.includes(e.hint)) text += ` (${e.hint})`;
  const cause = e.cause;
  if (cause instanceof Error && !text.includes(cause.message))
    text += `; caused by ${cause.name}: ${cause.message}`;
  return text;
}

/** The error and its causes, 5 deep at most (chains can be cyclic); a Cluster's `lastNodeError` counts. */
function causes(error: unknown): Array<Error & ErrorFacts> {
  const out: Array<Error & ErrorFacts> = [];
  let e: unknown = error;
  while (e instanceof Error && out.length < 5) {
    out.push(e as Error & ErrorFacts);
    e = e.cause ?? (e as { lastNodeError?: unknown }).lastNodeError;
  }
  return out;
}

/** ioredis' and Redis' words for a Redis that cannot answer now: a connection down, or a server
 * loading, without a master, read-only after a failover, or a Cluster mid-change. */
const REDIS_OUTAGE =
  /^(Too many Cluster redirections|Stream isn't writeable|Connection is closed|Command aborted due to connection close|Reached the max retries per request limit|Cluster isn't ready|Failed to refresh slots cache|None of startup nodes is available|All sentinels are unreachable|Command timed out|LOADING |MASTERDOWN |READONLY |CLUSTERDOWN |TRYAGAIN )/;

/** ioredis' words for a command given up because its connection is down. */
const REDIS_OFFLINE =
  /^(Stream isn't writeable|Connection is closed|Command aborted due to connection close|Reached the max retries per request limit)/;

/** True when Redis could not be reached or was switching (not a refusal): what `--wait` rides out. */
export function isRedisOutage(error: unknown): boolean {
  return causes(error).some((e) => {
    const code = typeof e.code === 'string' ? e.code : undefined;
    return (code !== undefined && TRANSIENT_NETWORK.has(code)) || REDIS_OUTAGE.test(e.message);
  });
}

/** True when the error is unmistakably Redis' own words for an outage (not a bare network code). */
export function isRedisConnectionLoss(error: unknown): boolean {
  return causes(error).some((e) => REDIS_OUTAGE.test(e.message));
}

/** Why Redis did not answer, in a user's words rather than ioredis' (offline queue, retries per request). */
export function outageReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return REDIS_OFFLINE.test(message) ? 'no connection' : message;
}

/** The longest delay a Node timer holds (24.8 days; a longer one fires at once): outside waits are cut to it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Default of ADOPS_MAX_RETRY_AFTER_SECONDS: the longest pause a server's Retry-After can impose. */
export const DEFAULT_RETRY_AFTER_CAP_MS = 15 * 60_000;

/** Name of our backoff strategy in job options (BullMQ calls settings.backoffStrategy for it). */
export const BACKOFF_TYPE = 'adops-jitter';

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const JOB_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 5 * 60_000 };
/** Webhook deliveries: 5 s, doubling, at most 15 minutes; 10 attempts span about half an hour. */
export const WEBHOOK_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 15 * 60_000 };
/** A Postgres transaction that lost a deadlock or a serialization race: 100 ms, at most 1 s. */
export const PG_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 1_000 };

/** Delay before retry `retry` (1: before the second attempt): exponential, capped, "equal jitter" (half
 * fixed, half random, so callers that failed together do not return together); `floorMs` a floor. */
export function backoffDelay(
  retry: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
  floorMs = 0,
): number {
  const n = Math.max(1, Math.floor(retry));
  // 2^40 already exceeds any sane cap; clamping the exponent keeps the maths finite.
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 40));
  const jittered = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  return Math.max(jittered, Math.ceil(floorMs));
}
