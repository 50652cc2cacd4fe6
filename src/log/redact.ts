/** What replaces a secret wherever it would appear. */
export const REDACTED = '[REDACTED]';

const REDACTED_BYTES = Buffer.from(REDACTED, 'utf8');

/** Secrets shorter than this are ignored: replacing them would mangle ordinary text. */
const MIN_SECRET = 4;

/** Secrets from this length on are also looked for inside base64 text, where a short one would match by chance. */
const MIN_BASE64_SECRET = 12;

/**
 * Replaces every occurrence of each secret in `text` (also its URL-encoded, JSON-escaped and
 * base64 forms, see secretForms) with [REDACTED]. Secrets shorter than 4 characters are ignored:
 * replacing them would mangle text.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET) continue;
    for (const form of secretForms(secret)) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
  }
  return out;
}

/**
 * redactSecrets for text cut from a longer one: a secret the cut split leaves a prefix at the end,
 * which is redacted too when it is 4 characters or more (shorter ones match ordinary text).
 */
export function redactCut(text: string, secrets: readonly string[]): string {
  const out = redactSecrets(text, secrets);
  let longest = 0;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET) continue;
    for (const form of secretForms(secret))
      for (let n = Math.min(form.length - 1, out.length); n > Math.max(longest, MIN_SECRET - 1); n--)
        if (out.endsWith(form.slice(0, n))) {
          longest = n;
          break;
        }
  }
  return longest === 0 ? out : out.slice(0, out.length - longest) + REDACTED;
}

/**
 * `body` with every form of each secret replaced by [REDACTED], as redactSecrets does for text;
 * the same Buffer when none occurs (the usual case costs one native search per form, no copy).
 */
export function redactBuffer(body: Buffer, secrets: readonly string[]): Buffer {
  let out = body;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET) continue;
    for (const form of secretForms(secret)) {
      const needle = Buffer.from(form, 'utf8');
      if (out.indexOf(needle) >= 0) out = replaceAll(out, needle);
    }
  }
  return out;
}

/**
 * Redacts secrets from a body that arrives in chunks: each chunk comes out redacted, less a tail
 * kept back (one byte shorter than the longest form of a secret) in case a secret runs on into the
 * next chunk. The chunks out, joined, are redactBuffer of the chunks in, joined.
 */
export class ChunkRedactor {
  private readonly hold: number;
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly secrets: readonly string[]) {
    let longest = 0;
    for (const secret of secrets)
      if (secret.length >= MIN_SECRET)
        for (const form of secretForms(secret)) longest = Math.max(longest, Buffer.byteLength(form));
    this.hold = Math.max(0, longest - 1);
  }

  /** The redacted bytes that can be let out now. */
  push(chunk: Buffer): Buffer {
    if (this.hold === 0) return chunk;
    const joined = redactBuffer(
      this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]),
      this.secrets,
    );
    const cut = Math.max(0, joined.length - this.hold);
    this.carry = Buffer.from(joined.subarray(cut));
    return joined.subarray(0, cut);
  }

  /** The tail kept back, at the body's end. */
  end(): Buffer {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    return rest;
  }
}

/**
 * Redacts the secrets from the message and stack of `error` and of each error in its cause chain,
 * in place, so the error keeps its class (BullMQ tells UnrecoverableError and its own signals
 * apart by class) while whatever records it (a failedReason, a stacktrace, a log) cannot see them.
 */
export function redactError<E>(error: E, secrets: readonly string[]): E {
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && depth < 8; depth++, e = e.cause) {
    const message = redactSecrets(e.message, secrets);
    if (message !== e.message)
      Object.defineProperty(e, 'message', { value: message, writable: true, configurable: true });
    if (e.stack !== undefined) {
      const stack = redactSecrets(e.stack, secrets);
      if (stack !== e.stack)
        Object.defineProperty(e, 'stack', { value: stack, writable: true, configurable: true });
    }
  }
  return error;
}

/**
 * The forms a secret takes in text: as is, URL-encoded, JSON-escaped, and, for a long one, the
 * base64 of its bytes at each of the three alignments a base64 text can hold them in (an
 * `Authorization: Basic` header echoed back encodes `user:key`, so the key's own base64 is not there).
 */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  if (secret.length >= MIN_BASE64_SECRET) for (const core of base64Cores(secret)) forms.add(core);
  return [...forms];
}

/**
 * For each alignment, the base64 characters that depend only on the secret's bytes: whatever comes
 * before or after the secret in the encoded text, one of these appears in it.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let skip = 0; skip < 3; skip++) {
    const rest = bytes.subarray(skip);
    cores.push(rest.subarray(0, rest.length - (rest.length % 3)).toString('base64'));
  }
  return cores;
}

/** `body` with every occurrence of `needle` replaced by [REDACTED]. */
function replaceAll(body: Buffer, needle: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = body.indexOf(needle); at >= 0; at = body.indexOf(needle, from)) {
    parts.push(body.subarray(from, at), REDACTED_BYTES);
    from = at + needle.length;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}
