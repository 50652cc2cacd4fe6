// How a failed pull is treated: retried, failed for good, or paused for the API's rate limit.
// Retries are an allowlist (style.md): only what can succeed on a second try is retried.

/** What to do with a pull that threw. */
export type PullFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly reason: string }
  /** The worker itself cut the request short (shutdown): not the API's doing, nothing to record. */
  | { readonly kind: 'aborted'; readonly reason: string }
  | { readonly kind: 'retry'; readonly reason: string }
  | { readonly kind: 'fatal'; readonly reason: string };

const RETRY_PG = /^(40001|40P01|53300|57P0[1-3]|08\d\d\d)$/;
const RETRY_NET = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Classifies an error thrown by fetching or loading a pull. */
export function classifyPullError(error: unknown): PullFailure {
  const reason = failureReason(error);
  const chain = causes(error);
  if (chain[0]?.code === 'ABORTED') return { kind: 'aborted', reason };
  const limited = chain.find(
    (e) => e.name === 'RateLimitedError' || (typeof e.retryAfterMs === 'number' && e.status === 429),
  );
  if (limited !== undefined) {
    const ms = typeof limited.retryAfterMs === 'number' ? limited.retryAfterMs : 1_000;
    return { kind: 'rate-limited', retryAfterMs: Math.max(0, ms), reason };
  }
  // An error that says whether it is retryable is believed (ApiError, ReportFormatError, ...).
  const declared = chain.find((e) => typeof e.retryable === 'boolean');
  if (declared !== undefined) return { kind: declared.retryable === true ? 'retry' : 'fatal', reason };
  const transient = chain.some(
    (e) =>
      (typeof e.code === 'string' && (RETRY_PG.test(e.code) || RETRY_NET.has(e.code))) ||
      // pg's messages when the server or the connection goes away mid-query.
      /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
        String(e.message ?? ''),
      ),
  );
  return { kind: transient ? 'retry' : 'fatal', reason };
}

/**
 * The reason shown for a failed pull (BullMQ's failedReason, report_loads.error, `adops status`):
 * the typed error's name and message, its hint when the message lacks it, and its first cause.
 */
export function failureReason(error: unknown): string {
  if (!(error instanceof Error)) return `Error: ${String(error)}`;
  const e = error as Error & { hint?: unknown };
  let text = `${e.name}: ${e.message}`;
  if (typeof e.hint === 'string' && e.hint !== '' && !e.message.includes(e.hint)) text += ` (${e.hint})`;
  const cause = e.cause;
  if (cause instanceof Error && !text.includes(cause.message))
    text += `; caused by ${cause.name}: ${cause.message}`;
  return text;
}

interface ErrorFacts {
  readonly name: string;
  readonly message?: unknown;
  readonly retryable?: unknown;
  readonly retryAfterMs?: unknown;
  readonly status?: unknown;
  readonly code?: unknown;
}

/** The error and its causes, outermost first, at most 5 deep (cause chains can be cyclic). */
function causes(error: unknown): ErrorFacts[] {
  const out: ErrorFacts[] = [];
  let e: unknown = error;
  while (e instanceof Error && out.length < 5) {
    out.push(e as unknown as ErrorFacts);
    e = e.cause;
  }
  return out;
}
