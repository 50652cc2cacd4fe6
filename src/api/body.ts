import { redactCut } from '../log/redact.js';

const EXCERPT = 160;

/**
 * The start of a body for an error message: secrets redacted, control characters escaped, cut
 * short. Enough to recognise an HTML error page or a truncated JSON, too little to leak data.
 */
export function excerptOf(body: Buffer | string, secrets: readonly string[]): string {
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

/**
 * The API's own message from an error body. The spec does not name the fields, so look where
 * APIs usually put it (message, error, error.message, errors[0].message, detail), else a short
 * excerpt of the text.
 */
export function apiMessageOf(body: Buffer, secrets: readonly string[]): string | undefined {
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
