// What `adops doctor` observes (probes.ts, over HTTP) and concludes (verdict.ts, forms.ts, without I/O).
import { DIMENSIONS_ENCODINGS, type DimensionsEncoding } from '../api/client.js';
import type { Period } from '../flatten/types.js';

/** The auth header forms, in the order they are tried. */
export const AUTH_FORMS = ['bearer', 'x-api-key'] as const;
export type AuthForm = (typeof AUTH_FORMS)[number];

/** The GET /reports parameter forms (ADOPS_REPORT_PARAMS), in the order doctor prefers them. */
export const REPORT_FORMS = DIMENSIONS_ENCODINGS;
export type ReportForm = DimensionsEncoding;

/** An HTTP answer to one probe, after 429s and transient failures were waited out. */
export interface HttpAnswer {
  readonly kind: 'http';
  readonly status: number;
  readonly body: Buffer; // The body as received (not decompressed). Never printed: it may echo the key.
  readonly contentEncoding: string | undefined;
  readonly apiMessage: string | undefined; // The API's own message from an error body, the key redacted.
}

/** No HTTP answer: the connection, TLS or a timeout failed (the last attempt's error). */
interface NoAnswer {
  readonly kind: 'none';
  readonly code: string;
  readonly detail: string;
}

export type Answer = HttpAnswer | NoAnswer;

/** The server's certificate as seen by a TLS handshake that verified it, or the handshake's error. */
export type TlsObservation =
  | { readonly ok: true; readonly subject: string; readonly issuer: string; readonly validTo: string }
  | { readonly ok: false; readonly code: string; readonly detail: string };

export interface FormObservation {
  readonly pair: Answer; // GET /reports with dimensions [day, campaign_id] over the probe period.
  /** The same period with [day] alone, asked only when `pair` is a 2xx: the cross-check of totals. */
  readonly day: Answer | undefined;
}

/** Everything the probes saw. Undefined parts were not probed (an earlier step failed). */
export interface Observations {
  readonly baseUrl: string; // ADOPS_BASE_URL (holds no key).
  /** What the configuration chooses today; preferred when it works. */
  readonly configured: { readonly auth: AuthForm; readonly reportParams: ReportForm };
  readonly tls: TlsObservation | undefined; // The handshake, for https base URLs only.
  readonly auth: Readonly<Record<AuthForm, Answer>>; // GET /campaigns?limit=1 with each header form.
  /** With the accepted header form; creatives is 'no-campaign' when no campaign id was listed. */
  readonly scopes:
    | {
        readonly campaigns: Answer;
        readonly creatives: Answer | 'no-campaign';
        readonly reports: Answer; // GET /reports for yesterday with [day], in the configured form.
      }
    | undefined;
  /** The period the form probes asked for (a week up to yesterday: a day alone may be empty). */
  readonly formPeriod: Period;
  readonly forms: Readonly<Partial<Record<ReportForm, FormObservation>>>;
  readonly gzip: Answer | undefined; // A GET sent with Accept-Encoding: gzip.
  /** The first Date header seen and our clock when its answer arrived. */
  readonly clock: { readonly serverDate: string; readonly localMs: number } | undefined;
  /** Rate-limit headers (X-RateLimit-*, RateLimit-*, Retry-After) as last seen, names lower-case. */
  readonly rateLimitHeaders: Readonly<Record<string, string>>;
  readonly throttled: number;
}

/** How one table row came out; `no` marks an option this server does not take (not a failure). */
export type RowStatus = 'ok' | 'warn' | 'fail' | 'skip' | 'info' | 'no';
export interface Row {
  readonly check: string;
  readonly status: RowStatus;
  readonly detail: string;
}

/** The rows of one check: `row('gzip')('ok', detail)`. */
export const row =
  (check: string) =>
  (status: RowStatus, detail: string): Row => ({ check, status, detail });

export type FormOutcome =
  | 'ok'
  /** Answered 2xx, but the report is not the nested two-dimension report asked for. */
  | 'wrong'
  /** Answered a correct-looking but empty report: nothing to tell the forms apart by. */
  | 'empty'
  /** A correct two-dimension report whose cross-check with [day] could not be made. */
  | 'unverified'
  | 'error'
  | 'skipped';

export function isSuccess(a: Answer | undefined): a is HttpAnswer {
  return a?.kind === 'http' && a.status >= 200 && a.status < 300;
}

export function hasStatus(a: Answer | undefined, status: number): a is HttpAnswer {
  return a?.kind === 'http' && a.status === status;
}

/** The answer in a few words: `200`, `401 (API key invalid)`, `no answer (ECONNRESET: ...)`. */
export function describeAnswer(a: Answer): string {
  if (a.kind === 'none') return `no answer (${a.code}: ${a.detail})`;
  if (a.status >= 200 && a.status < 300) return String(a.status);
  return a.apiMessage === undefined ? String(a.status) : `${a.status} (${a.apiMessage})`;
}

/** The status alone, or the error code when there was no answer (for --json). */
export function answerCode(a: Answer): string {
  return a.kind === 'none' ? a.code : String(a.status);
}
