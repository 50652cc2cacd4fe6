// The echoKey quirk: a careless server that repeats the caller's API key back to it, in a success
// body, an error body, an HTML error page or a response header. It lets tests prove that the key,
// once echoed, is redacted before anything stores it.
import type { Reply } from './api/http.js';
import type { EchoForm, EchoPlace } from './types.js';

/** The response header that carries the key with the `header` place. */
export const ECHO_HEADER = 'x-request-key';

/** The JSON field that carries the key in a body (`body` and `error` places). */
export const ECHO_FIELD = 'request_key';

/**
 * The reply with the key echoed in each of `places` that fits it: `body` adds a field to a 2xx
 * JSON object (streamed reports too: only the first chunk changes), `error` adds the field and
 * quotes the key in the message of a JSON error body, `html` quotes the Authorization header in an
 * HTML page, `header` adds X-Request-Key. The key is written in `form` (see keyIn). Returns
 * undefined when nothing was echoed.
 */
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

/**
 * `key` written in `form`, as it goes between the quotes of a JSON string: `json` as
 * JSON.stringify writes it, `json-slash` with `/` as `\/` (PHP's json_encode), `percent` and
 * `percent-lower` every UTF-8 byte as %XX or %xx, `unicode` and `unicode-lower` every UTF-16 unit
 * as \uXXXX or \uxxxx, `mixed` each character in the next of those five ways (raw first).
 */
export function keyIn(key: string, form: EchoForm): string {
  const json = (c: string) => JSON.stringify(c).slice(1, -1);
  const percent = (c: string, lower: boolean) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${hexOf(b, 2, lower)}`).join('');
  const unicode = (c: string, lower: boolean) =>
    Array.from({ length: c.length }, (_, i) => `\\u${hexOf(c.charCodeAt(i), 4, lower)}`).join('');
  const each = (f: (c: string, i: number) => string) => [...key].map(f).join('');
  switch (form) {
    case 'json':
      return json(key);
    case 'json-slash':
      return json(key).replace(/\//g, '\\/');
    case 'percent':
    case 'percent-lower':
      return each((c) => percent(c, form === 'percent-lower'));
    case 'unicode':
    case 'unicode-lower':
      return each((c) => unicode(c, form === 'unicode-lower'));
    case 'mixed':
      return each(
        (c, i) =>
          [json(c), percent(c, false), percent(c, true), unicode(c, false), unicode(c, true)][
            i % 5
          ] as string,
      );
  }
}

function hexOf(n: number, width: number, lower: boolean): string {
  const hex = n.toString(16).padStart(width, '0');
  return lower ? hex : hex.toUpperCase();
}

/** A body that starts as a JSON object, with `"request_key": "<written>"` as its first member. */
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

/** Stands for the key while the error body is built, replaced by the key as written. */
const KEY_MARK = '@@ECHOED_KEY@@';

/** A JSON error object with the key in its message and in a field; undefined when not an object. */
function errorWithKey(body: string, written: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const o = doc as Record<string, unknown>;
  const message = typeof o.message === 'string' ? o.message : 'request refused';
  return JSON.stringify({ ...o, message: `${message} (key ${KEY_MARK})`, [ECHO_FIELD]: KEY_MARK })
    .split(KEY_MARK)
    .join(written);
}
