// Pure checks of bodies, and what an error may quote. A malformed body (HTML, cut short, not JSON) is retried
// like a 5xx until it comes twice in a row (repeatsPrevious); a wrong shape fails at once.
import { createHash } from 'node:crypto';
import { isSpace, JSON_START } from '../flatten/json-cursor.js';
import { redactBuffer, redactCut, type Secrets } from '../platform/log/redact.js';
import { apiResponseError, type ApiError, MALFORMED_HINT, REPEATED_HINT } from './errors.js';

/** Why a 2xx body cannot be used; undefined when it can. */
export type BodyCheck = (body: Buffer, contentType: string | undefined) => string | undefined;

/** Index of the first byte that is not whitespace or a UTF-8 byte order mark; body.length if none. */
function firstByte(body: Buffer): number {
  let i = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  while (i < body.length && isSpace(body[i])) i++;
  return i;
}

/** What makes a body plainly not JSON: empty, HTML (starts with `<`, or labelled text/html and not starting
 * like JSON: some servers mislabel JSON), or text no JSON value starts with. */
function notJson(body: Buffer, contentType: string | undefined): string | undefined {
  const at = firstByte(body);
  if (at >= body.length) return 'an empty body';
  const c = body[at] as number;
  if (c === 0x3c) return 'an HTML page';
  if (JSON_START.has(c)) return undefined;
  return /^\s*text\/html\b/i.test(contentType ?? '') ? 'an HTML page' : 'not JSON';
}

/** The cheap check of a GET /reports body: not plainly non-JSON, ending in `}` (a cut one rarely does). */
export const reportBodyProblem: BodyCheck = (body, contentType) => {
  const problem = notJson(body, contentType);
  if (problem !== undefined) return problem;
  let last = body.length - 1;
  while (last >= 0 && isSpace(body[last])) last--;
  if (body[firstByte(body)] === 0x7b && body[last] !== 0x7d)
    return 'a JSON object cut short (it does not end with "}")';
  return undefined;
};

/** A catalogue body parsed, or why it is malformed (the message never quotes the body). */
export function parseJsonBody(
  body: Buffer,
  contentType: string | undefined,
): { ok: true; doc: unknown } | { ok: false; problem: string } {
  const problem = notJson(body, contentType);
  if (problem !== undefined) return { ok: false, problem };
  try {
    const text = body.toString('utf8');
    // A byte order mark is not JSON, but harmless: the report scanner skips it too.
    return { ok: true, doc: JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown };
  } catch {
    // V8's message quotes the body, which could hold an echoed key: the caller adds a redacted excerpt.
    return { ok: false, problem: 'not valid JSON' };
  }
}

/** Malformed answers are retryable until the same body (SHA-256) comes twice in a row, across pulls too. */
export function repeatsPrevious(sha256: string | undefined, previous: string | undefined): boolean {
  return sha256 !== undefined && sha256 === previous;
}

/** The SHA-256 of a body, hex: tells a repeated malformed answer from a new one. */
export function bodyDigest(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** A malformed 2xx body's error: retryable unless it repeats `previous` or is a POST's (may duplicate). */
export function malformedAnswer(
  raw: Buffer,
  problem: string,
  previous: string | undefined,
  at: { status: number; method: string; path: string; attempts: number; secrets: Secrets },
): ApiError {
  const sha256 = bodyDigest(raw);
  const repeated = repeatsPrevious(sha256, previous);
  const post = at.method === 'POST';
  return apiResponseError({
    status: at.status,
    method: at.method,
    path: at.path,
    attempts: at.attempts,
    hint: post
      ? 'a POST is never repeated (it may have created the resource): list the resources to check, then retry'
      : repeated
        ? REPEATED_HINT
        : MALFORMED_HINT,
    retryable: !repeated && !post,
    problem: repeated ? `${problem}; the same body twice in a row` : problem,
    excerpt: excerptOf(raw, at.secrets),
    // Archived with the failed pull: an echoed key is redacted; the digest stays the received body's.
    body: redactBuffer(raw, at.secrets),
    sha256,
  });
}

const EXCERPT = 160;

/** The start of a body for a message, redacted and escaped: enough to recognise it, too little to leak. */
export function excerptOf(body: Buffer | string, secrets: Secrets): string {
  const head = (typeof body === 'string' ? body : body.subarray(0, EXCERPT * 4).toString('utf8')).slice(
    0,
    EXCERPT * 2,
  );
  // A key the cut split must not survive as a prefix (earlier keys shrink and pull it into view).
  // eslint-disable-next-line no-control-regex -- control characters are what we escape
  const clean = redactCut(head, secrets).replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === '\n' || c === '\t' ? ' ' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return clean.length > EXCERPT ? `${clean.slice(0, EXCERPT)}…` : clean;
}

/** The API's own message from an error body, where APIs usually put it, else an excerpt. */
export function apiMessageOf(body: Buffer, secrets: Secrets): string | undefined {
  if (body.length === 0) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return excerptOf(body, secrets);
  }
  const found = messageIn(doc);
  return found === undefined ? excerptOf(body, secrets) : excerptOf(found, secrets);
}

function messageIn(doc: unknown): string | undefined {
  if (typeof doc === 'string') return doc;
  if (typeof doc !== 'object' || doc === null) return undefined;
  if (Array.isArray(doc)) return messageIn(doc[0]);
  const o = doc as Record<string, unknown>;
  for (const key of ['message', 'error_description', 'error', 'detail', 'errors', 'title']) {
    const inner = messageIn(o[key]);
    if (inner !== undefined) return inner;
  }
  return undefined;
}
