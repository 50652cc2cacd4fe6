// Small readings of one probe answer, shared by the verdicts.
import type { Answer, HttpAnswer } from '../types.js';

/** True for an HTTP answer with a 2xx status. */
export function isSuccess(a: Answer | undefined): a is HttpAnswer {
  return a?.kind === 'http' && a.status >= 200 && a.status < 300;
}

/** True for an HTTP answer with exactly this status. */
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
