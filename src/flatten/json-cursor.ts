// A cursor over a window of JSON bytes: tokens read in place, no objects built; NEED_MORE at a window's end.
import { hexValue, JSON_SHORT } from '../platform/log/secret-pattern.js';
import { DUPLICATE_KEY, malformedBody, ReportFormatError } from './errors.js';

/** What each of JSON's short escapes stands for, by the byte after the backslash. */
const SHORT_ESCAPES = new Map<number | undefined, string>(
  Object.entries(JSON_SHORT).map(([c, e]) => [e.charCodeAt(0), c]),
);

/** Deepest nesting accepted: far beyond any report, far below the call stack's limit. */
export const NEST_LIMIT = 512;

/** Thrown (one instance) when a token runs into a non-last window's end: the scanner rewinds the unit. */
export const NEED_MORE = Object.assign(new Error('the window ends inside a token'), {
  name: 'NeedMoreBytes',
});

/** A failure this close to a window's end may be the window's end: wait for more bytes. */
const NEAR_END = 8;

/** The lexer under ReportScanner: a read position in JSON bytes; errors are malformedBody's. */
export class JsonCursor {
  pos = 0;
  /** Whether the string skipString last passed holds a backslash escape. */
  escaped = false;
  private readonly shortKeys = new Map<number, string>();
  private readonly digitKeys = new Map<number, string>();

  /** Offset of `b` in the whole body: windows of a streamed body follow each other. */
  base = 0;

  /** `b`: the body, or the current window of a streamed body, `final` when it runs to the body's end. */
  constructor(
    public b: Buffer,
    public final = true,
  ) {}

  /** Moves on to the next window: the bytes from pos on, then `chunk`. */
  shift(chunk: Buffer, final: boolean): void {
    const rest = this.b.subarray(this.pos);
    this.base += this.pos;
    this.b = rest.length === 0 ? chunk : Buffer.concat([rest, chunk], rest.length + chunk.length);
    this.pos = 0;
    this.final = final;
  }

  /** An unescaped key's text, one string per distinct short (≤6 byte) or all-digit (≤14 digit: an id) key:
   * they repeat under every parent, and a string made per key was a tenth of what a load allocated. */
  shortKey(start: number, end: number): string {
    const len = end - start;
    if (len > 6) return len <= 14 ? this.digitsKey(start, end) : this.keyText(start, end, false);
    const b = this.b;
    let packed = len;
    for (let i = start; i < end; i++) {
      const c = b[i] as number;
      if (c >= 0x80) return this.keyText(start, end, false);
      packed = packed * 128 + c;
    }
    let text = this.shortKeys.get(packed);
    if (text === undefined) {
      text = b.toString('latin1', start, end);
      if (this.shortKeys.size < 100_000) this.shortKeys.set(packed, text);
    }
    return text;
  }

  /** An all-digit key's one string (by its value and length: 16 x 10^14 is exact below 2^53; leading zeros stay apart). */
  private digitsKey(start: number, end: number): string {
    const b = this.b;
    let value = 0;
    for (let i = start; i < end; i++) {
      const d = (b[i] as number) - 0x30;
      if (d < 0 || d > 9) return this.keyText(start, end, false);
      value = value * 10 + d;
    }
    const packed = value * 16 + (end - start);
    let text = this.digitKeys.get(packed);
    if (text === undefined) {
      text = b.toString('latin1', start, end);
      if (this.digitKeys.size < 100_000) this.digitKeys.set(packed, text);
    }
    return text;
  }

  /** Index in `known` of the unescaped key bytes [start, end), or -1: no string made. */
  knownIndex(known: readonly Buffer[], start: number, end: number): number {
    const b = this.b;
    const len = end - start;
    const first = b[start];
    outer: for (let k = 0; k < known.length; k++) {
      const name = known[k] as Buffer;
      if (name.length !== len || name[0] !== first) continue;
      for (let i = 1; i < len; i++) if (name[i] !== b[start + i]) continue outer;
      return k;
    }
    return -1;
  }

  ws(): void {
    const b = this.b;
    let p = this.pos;
    while (isSpace(b[p])) p++;
    this.pos = p;
  }

  colon(): void {
    this.ws();
    if (this.b[this.pos] !== 0x3a) throw this.syntax();
    this.pos++;
    this.ws();
  }

  /** Moves past the string at pos (validating it); returns the index of its closing quote. */
  skipString(): number {
    const b = this.b;
    let p = this.pos + 1;
    this.escaped = false;
    for (;;) {
      const c = b[p];
      if (c === 0x22) break;
      if (c === undefined || c < 0x20) throw this.syntax(undefined, p);
      if (c === 0x5c) {
        this.escaped = true;
        const e = b[p + 1];
        if (e === 0x75) {
          if (hexValue(b, p + 2, 4) < 0) throw this.syntax('a bad \\u escape', p);
          p += 6;
        } else if (SHORT_ESCAPES.has(e)) p += 2;
        else throw this.syntax('a bad escape', p);
      } else p++;
    }
    this.pos = p + 1;
    return p;
  }

  /** The text of the string whose content is bytes [start, end) (already validated). */
  keyText(start: number, end: number, escaped: boolean): string {
    const b = this.b;
    if (!escaped) {
      let ascii = true;
      for (let i = start; i < end; i++)
        if ((b[i] as number) >= 0x80) {
          ascii = false;
          break;
        }
      return b.toString(ascii ? 'latin1' : 'utf8', start, end);
    }
    let out = '';
    let from = start;
    let p = start;
    while (p < end) {
      if (b[p] !== 0x5c) {
        p++;
        continue;
      }
      out += b.toString('utf8', from, p);
      const e = b[p + 1];
      if (e === 0x75) {
        out += String.fromCharCode(hexValue(b, p + 2, 4));
        p += 6;
      } else {
        out += SHORT_ESCAPES.get(e);
        p += 2;
      }
      from = p;
    }
    return out + b.toString('utf8', from, end);
  }

  readString(): string {
    const start = this.pos + 1;
    const end = this.skipString();
    return this.keyText(start, end, this.escaped);
  }

  readScalar(): unknown {
    const b = this.b;
    const c = b[this.pos];
    if (c === 0x22) return this.readString();
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return this.readNumber();
    if (c === 0x74 && this.literal('true')) return true;
    if (c === 0x66 && this.literal('false')) return false;
    if (c === 0x6e && this.literal('null')) return null;
    throw this.syntax();
  }

  literal(word: string): boolean {
    for (let i = 1; i < word.length; i++) if (this.b[this.pos + i] !== word.charCodeAt(i)) return false;
    this.pos += word.length;
    return true;
  }

  /** A JSON number, by the JSON grammar; plain integers of up to 15 digits without a string. */
  readNumber(): number {
    const b = this.b;
    const start = this.pos;
    let p = start;
    if (b[p] === 0x2d) p++;
    let n = 0;
    const digitsFrom = p;
    if (b[p] === 0x30) p++;
    else if (isDigit(b[p])) {
      while (isDigit(b[p])) n = n * 10 + ((b[p++] as number) - 0x30);
    } else throw this.syntax(undefined, p);
    let plain = b[start] !== 0x2d && p - digitsFrom <= 15;
    if (b[p] === 0x2e) {
      plain = false;
      p++;
      if (!isDigit(b[p])) throw this.syntax(undefined, p);
      while (isDigit(b[p])) p++;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      plain = false;
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (!isDigit(b[p])) throw this.syntax(undefined, p);
      while (isDigit(b[p])) p++;
    }
    // A number running to the window's end may go on in the next one.
    if (p >= b.length && !this.final) throw NEED_MORE;
    this.pos = p;
    return plain ? n : Number(b.toString('latin1', start, p));
  }

  /** Any JSON value as JSON.parse builds it (prototype-less objects), for totals; a key given twice is a
   * ReportFormatError naming it under `path` (the value's own, e.g. `totals`), not JSON.parse's last wins. */
  readValue(level: number, path: string): unknown {
    if (level > NEST_LIMIT) throw this.syntax('nesting too deep');
    const b = this.b;
    const c = b[this.pos];
    if (c === 0x7b) {
      this.pos++;
      const o = Object.create(null) as Record<string, unknown>;
      this.ws();
      if (b[this.pos] === 0x7d) {
        this.pos++;
        return o;
      }
      for (;;) {
        this.ws();
        if (b[this.pos] !== 0x22) throw this.syntax();
        const key = this.readString();
        if (key in o) throw new ReportFormatError(memberPath(path, key), DUPLICATE_KEY);
        this.colon();
        o[key] = this.readValue(level + 1, memberPath(path, key));
        this.ws();
        if (b[this.pos] === 0x2c) this.pos++;
        else if (b[this.pos] === 0x7d) {
          this.pos++;
          return o;
        } else throw this.syntax();
      }
    }
    if (c === 0x5b) {
      this.pos++;
      const a: unknown[] = [];
      this.ws();
      if (b[this.pos] === 0x5d) {
        this.pos++;
        return a;
      }
      for (;;) {
        this.ws();
        a.push(this.readValue(level + 1, `${path}[${a.length}]`));
        this.ws();
        if (b[this.pos] === 0x2c) this.pos++;
        else if (b[this.pos] === 0x5d) {
          this.pos++;
          return a;
        } else throw this.syntax();
      }
    }
    return this.readScalar();
  }

  /** The error for a body that is not valid JSON at `at` (pos moves there): retryable until it repeats. */
  syntax(what?: string, at = this.pos): ReportFormatError {
    const b = this.b;
    this.pos = at;
    if (!this.final && at >= b.length - NEAR_END) throw NEED_MORE;
    const c = b[at];
    if (this.base === 0 && (b.length === 0 || (c === undefined && b.every(isSpace))))
      return malformedBody('not valid JSON: an empty body');
    const found =
      what ??
      (c === undefined
        ? 'the body ends early (truncated?)'
        : `unexpected ${c >= 0x20 && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16)}`}`);
    // No excerpt: the parser cannot redact an echoed API key; the offset finds the spot in the raw body.
    return malformedBody(
      `not valid JSON: ${found} at byte ${this.base + at}${this.final ? ` of ${this.base + b.length}` : ''}`,
    );
  }
}

/** The path of member `key` of the object at `path`: `totals.impressions`, `meta["a b"]`. */
export function memberPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Bytes a JSON text can start with: { [ " - 0-9 t f n. */
export const JSON_START: ReadonlySet<number> = new Set(Buffer.from('{["-0123456789tfn', 'latin1'));

/** JSON's whitespace: space, \n, \r, \t. */
export function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}
