// The echoKey quirk: a careless server that repeats the caller's API key back to it, in a success
// body, an error body, an HTML error page or a response header. It lets tests prove that the key,
// once echoed, is redacted before anything stores it.
import type { Reply } from './api/http.js';
import type { EchoPlace } from './types.js';

/** The response header that carries the key with the `header` place. */
export const ECHO_HEADER = 'x-request-key';

/** The JSON field that carries the key in a body (`body` and `error` places). */
export const ECHO_FIELD = 'request_key';

/**
 * The reply with the key echoed in each of `places` that fits it: `body` adds a field to a 2xx
 * JSON object (streamed reports too: only the first chunk changes), `error` adds the field and
 * quotes the key in the message of a JSON error body, `html` quotes the Authorization header in an
 * HTML page, `header` adds X-Request-Key. Returns undefined when nothing was echoed.
 */
export function echoKey(reply: Reply, key: string, places: readonly EchoPlace[]): Reply | undefined {
  let out = reply;
  let echoed = false;
  const html = /text\/html/i.test(reply.headers?.['content-type'] ?? '');
  if (places.includes('body') && reply.status < 300 && !html) {
    const body = withField(reply.body, key);
    if (body !== undefined) [out, echoed] = [{ ...out, body }, true];
  }
  if (places.includes('error') && reply.status >= 400 && !html && typeof reply.body === 'string') {
    const body = errorWithKey(reply.body, key);
    if (body !== undefined) [out, echoed] = [{ ...out, body }, true];
  }
  if (places.includes('html') && html && typeof reply.body === 'string') {
    const note = `<p>Authorization: Bearer ${key}</p>`;
    const at = reply.body.lastIndexOf('</body>');
    const body = at < 0 ? reply.body + note : reply.body.slice(0, at) + note + reply.body.slice(at);
    [out, echoed] = [{ ...out, body }, true];
  }
  if (places.includes('header'))
    [out, echoed] = [{ ...out, headers: { ...out.headers, [ECHO_HEADER]: key } }, true];
  return echoed ? out : undefined;
}

/** A body that starts as a JSON object, with `"request_key": key` as its first member. */
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

function prefixed(text: string, key: string): string | undefined {
  if (!text.startsWith('{')) return undefined;
  const rest = text.slice(1);
  const member = `${JSON.stringify(ECHO_FIELD)}:${JSON.stringify(key)}`;
  return `{${member}${rest.trimStart().startsWith('}') ? '' : ','}${rest}`;
}

/** A JSON error object with the key in its message and in a field; undefined when not an object. */
function errorWithKey(body: string, key: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const o = doc as Record<string, unknown>;
  const message = typeof o.message === 'string' ? o.message : 'request refused';
  return JSON.stringify({ ...o, message: `${message} (key ${key})`, [ECHO_FIELD]: key });
}
