// How a secret can be written where a server repeats it: each character as is or escaped (%XX, \uXXXX in
// either case, JSON's short escapes such as PHP's \/), mixed; one regex per set, built once (it takes ms).

/** Secrets shorter than this are ignored: replacing them would mangle ordinary text. */
export const MIN_SECRET = 4;

/** Secrets from this length on are also looked for inside base64 text, where a short one would match by chance. */
const MIN_BASE64_SECRET = 12;

const PERCENT = 0x25;
const BACKSLASH = 0x5c;
const PLUS = 0x2b;

/** What finds a set of secrets, in text (UTF-16) and in bytes (a Buffer read as latin1). */
export type SecretMatcher = ReturnType<typeof build>;

/** One way of writing one character: one regex atom per character written. */
type Writing = readonly string[];

/** The matcher of `secrets` (those of 4 characters or more), or undefined when none is that long. */
export function matcherOf(secrets: readonly string[]): SecretMatcher | undefined {
  const kept = secrets.filter((s) => s.length >= MIN_SECRET);
  if (kept.length === 0) return undefined;
  return build(kept);
}

function build(secrets: readonly string[]) {
  // Base64 text is written as is but for its punctuation, which JSON and URL encoders escape.
  const cores = secrets.flatMap(base64Cores).filter((c) => !secrets.includes(c));
  const sequences = [
    ...secrets.map((s) => ({ s, escaped: (_: string) => true })),
    ...cores.map((s) => ({ s, escaped: (c: string) => c === '/' || c === '+' })),
  ];
  const writings = (mode: 'text' | 'bytes') =>
    sequences.map(({ s, escaped }) => [...s].map((c) => writingsOf(c, mode, escaped(c))));
  const text = writings('text');
  const bytes = writings('bytes');
  const table = escapeTable(sequences.flatMap(({ s, escaped }) => [...s].filter(escaped)));
  let prefix: RegExp | undefined;
  return {
    /** Every writing of any of the secrets in a string (global). */
    text: new RegExp(text.map(sequencePattern).join('|'), 'g'),
    /** The same over bytes read as latin1 (one character per byte; characters as is in UTF-8). */
    bytes: new RegExp(bytes.map(sequencePattern).join('|'), 'g'),
    /** Longest writing in UTF-16 units, and in bytes: a writing that starts at i ends by i + longestBytes. */
    longestText: Math.max(...text.map(longest)),
    longestBytes: Math.max(...bytes.map(longest)),
    /** The secrets (and base64 cores) as is, in UTF-8 and as text. */
    plain: sequences.map(({ s }) => Buffer.from(s, 'utf8')),
    plainText: sequences.map(({ s }) => s),
    /** The bytes escapes start with: % and \, and + when a secret holds a space. */
    escapeBytes: table.space ? [PERCENT, BACKSLASH, PLUS] : [PERCENT, BACKSLASH],
    /** Whether the escape at `at` (one of escapeBytes) writes a character of a secret. */
    escapes: (body: Buffer, at: number) => writesSecretChar(body, at, table),
    /** A start of a writing (its first character whole) that runs to the end of a string. */
    prefix: () => (prefix ??= new RegExp(`(?:${text.map(prefixPattern).join('|')})$`)),
  };
}

/** The writings of one character (one code point): as is, then (when `escaped`) every escape. */
function writingsOf(c: string, mode: 'text' | 'bytes', escaped: boolean): Writing[] {
  const utf8 = [...Buffer.from(c, 'utf8')];
  const units = Array.from({ length: c.length }, (_, i) => c.charCodeAt(i));
  const out: Writing[] = [mode === 'text' ? units.map(atom) : utf8.map(atom)];
  if (!escaped) return out;
  out.push(utf8.flatMap((b) => [atom(PERCENT), ...hexAtoms(b, 2)]));
  if (c === ' ') out.push([atom(PLUS)]);
  out.push(units.flatMap((u) => [atom(BACKSLASH), atom(0x75), ...hexAtoms(u, 4)]));
  const short = JSON_SHORT[c];
  if (short !== undefined) out.push([atom(BACKSLASH), atom(short.charCodeAt(0))]);
  return out;
}

/** JSON's two-character escapes (RFC 8259), by the character they stand for. */
export const JSON_SHORT: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  '\b': 'b',
  '\f': 'f',
  '\n': 'n',
  '\r': 'r',
  '\t': 't',
};

/** Which escapes write a character of a secret: %XX bytes, \uXXXX units, \X short escapes, + for a space. */
interface EscapeTable {
  readonly percent: ReadonlySet<number>;
  readonly unicode: ReadonlySet<number>;
  readonly short: ReadonlySet<number>;
  readonly space: boolean;
}

function escapeTable(chars: readonly string[]): EscapeTable {
  const percent = new Set<number>();
  const unicode = new Set<number>();
  const short = new Set<number>();
  for (const c of chars) {
    for (const b of Buffer.from(c, 'utf8')) percent.add(b);
    for (let i = 0; i < c.length; i++) unicode.add(c.charCodeAt(i));
    const s = JSON_SHORT[c];
    if (s !== undefined) short.add(s.charCodeAt(0));
  }
  return { percent, unicode, short, space: chars.includes(' ') };
}

function writesSecretChar(b: Buffer, at: number, t: EscapeTable): boolean {
  const first = b[at];
  if (first === PERCENT) {
    const v = hexValue(b, at + 1, 2);
    return v >= 0 && t.percent.has(v);
  }
  if (first === PLUS) return t.space;
  if (first !== BACKSLASH) return false;
  const next = b[at + 1];
  if (next === 0x75) {
    const v = hexValue(b, at + 2, 4);
    if (v >= 0) return t.unicode.has(v);
  }
  return next !== undefined && t.short.has(next);
}

/** The value of `digits` hex digits at `at`, or -1 when they are not all there. */
export function hexValue(b: Buffer, at: number, digits: number): number {
  let v = 0;
  for (let i = at; i < at + digits; i++) {
    const c = b[i];
    if (c === undefined) return -1;
    const d =
      c <= 0x39 && c >= 0x30 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

function atom(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Atoms of `n` in hex, `width` digits, each letter in either case. */
function hexAtoms(n: number, width: number): string[] {
  return [...n.toString(16).padStart(width, '0')].map((d) =>
    /[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : atom(d.charCodeAt(0)),
  );
}

function alternatives(ws: readonly Writing[]): string {
  return `(?:${ws.map((w) => w.join('')).join('|')})`;
}

/** Every writing of a sequence of characters, each written any of its ways. */
function sequencePattern(chars: readonly Writing[][]): string {
  return chars.map(alternatives).join('');
}

/** A start of a writing of the sequence whose first character is written whole. */
function prefixPattern(chars: readonly Writing[][]): string {
  let tail = '';
  for (let i = chars.length - 1; i >= 1; i--) {
    const ws = chars[i] as Writing[];
    const parts = ws.filter((w) => w.length > 1).map((w) => nested(w.slice(0, -1)));
    tail = `(?:${alternatives(ws)}${tail === '' ? '' : `(?:${tail})?`}${parts.map((p) => `|${p}`).join('')})`;
  }
  return `${alternatives(chars[0] as Writing[])}${tail === '' ? '' : `(?:${tail})?`}`;
}

/** Atoms t0 t1 ... tn as a pattern matching t0, t0 t1, ..., t0 ... tn. */
function nested(atoms: readonly string[]): string {
  let out = '';
  for (let i = atoms.length - 1; i >= 1; i--) out = `(?:${atoms[i] as string}${out})?`;
  return `${atoms[0] as string}${out}`;
}

/** Characters (atoms) of the longest writing of a sequence. */
function longest(chars: readonly Writing[][]): number {
  return chars.reduce((n, ws) => n + Math.max(...ws.map((w) => w.length)), 0);
}

/** For each alignment, the base64 characters that depend only on the secret's bytes (an echoed `Basic`
 * header encodes `user:key`, so the key's own base64 is not there). */
function base64Cores(secret: string): string[] {
  if (secret.length < MIN_BASE64_SECRET) return [];
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let skip = 0; skip < 3; skip++) {
    const rest = bytes.subarray(skip);
    cores.push(rest.subarray(0, rest.length - (rest.length % 3)).toString('base64'));
  }
  return cores;
}

/** Whether `text` may hold an API key, so a message must not quote it: a run of letters and digits 8+ long
 * with a digit in it, or 20+ long. Words, variable names and ordinary paths do not. */
export function mayHoldKey(text: string): boolean {
  return text.split(/[^A-Za-z0-9]+/).some((run) => (run.length >= 8 && /\d/.test(run)) || run.length >= 20);
}

/** What messages show in place of a value that may hold a key. */
export const KEY_LIKE_HIDDEN = 'its value is not shown: it may hold an API key';
