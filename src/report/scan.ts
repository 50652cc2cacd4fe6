import type { Dimension } from '../config/dimensions.js';
import { ReportFormatError } from './errors.js';
import { childPath } from './flatten.js';
import { describe, RowBuilder, type Key } from './rows.js';
import { COUNTERS, type ReportRow } from './types.js';

/** An open container of `items`; paths are spelled out from these links only for an error. */
interface Frame {
  isArray: boolean;
  /** How many dimension values the keys above this container have set. */
  depth: number;
  parent: Frame | undefined;
  key: Key;
  /** 0: just opened, 1: after a member (expects `,` or the close). */
  state: number;
  /** Array: index of the next element. */
  index: number;
  /** Object: holds a nested container (so it is a level of keys, not a row). */
  sawContainer: boolean;
  /** Object: holds a scalar field (so it must be a row of counters). */
  sawScalar: boolean;
  sawCounter: boolean;
  /** The first scalar field, kept as byte offsets: its key text is only needed for an error. */
  firstScalarKeyStart: number;
  firstScalarKeyEnd: number;
  firstScalarEscaped: boolean;
  firstScalarValue: unknown;
}

const NEST_LIMIT = 512;
// Phases of the top-level object around `items`.
const TOP_OPEN = 0;
const TOP_MEMBER = 1;
const TOP_AFTER = 2;
const IN_ITEMS = 3;
const DONE = 4;

/**
 * Streams a GET /reports body straight into rows: a JSON scanner over the bytes that never builds
 * the object tree of `items` (a million leaves are millions of objects: seconds of JSON.parse and
 * GC, and a gigabyte of heap). Accepts exactly what JSON.parse + Flattener accept, except that an
 * item holding counters must not also hold nested objects. Work comes in bounded steps so a
 * caller can yield to the event loop between them.
 */
export class ReportScanner {
  private readonly b: Buffer;
  private pos = 0;
  private phase = TOP_OPEN;
  /**
   * Open containers, innermost last, reused level by level: a million leaves would otherwise be
   * millions of short-lived frames for the GC. Parent links stay valid while a frame is open,
   * which is whenever a path is spelled out.
   */
  private readonly frames: Frame[] = [];
  private top = 0;
  private readonly out: RowBuilder<Frame | undefined>;
  private readonly dimRaw: unknown[];
  private readonly counterRaw: unknown[] = [undefined, undefined, undefined, undefined, undefined];
  /** Field names a row may hold: COUNTERS[0..4], then the dimensions, as bytes. */
  private readonly known: Buffer[];
  private sawItems = false;
  /** Whether the string skipString last passed holds a backslash escape. */
  private escaped = false;
  private readonly shortKeys = new Map<number, string>();
  /** The parsed `totals` value, undefined when absent. */
  totals: unknown = undefined;

  constructor(
    body: Buffer,
    private readonly dims: readonly Dimension[],
  ) {
    this.b = body;
    this.out = new RowBuilder(dims, childPath);
    this.dimRaw = dims.map(() => undefined);
    this.known = [...COUNTERS, ...dims].map((n) => Buffer.from(n, 'latin1'));
    if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) this.pos = 3;
  }

  get rows(): ReportRow[] {
    return this.out.rows;
  }

  /** Does up to about `budget` units of work (one per container); true when the body is done. */
  step(budget: number): boolean {
    while (this.phase !== DONE) {
      if (budget-- <= 0) return false;
      if (this.phase === IN_ITEMS) this.itemsStep();
      else this.topStep();
    }
    if (!this.sawItems) throw new ReportFormatError('items', 'missing: expected the report items');
    return this.out.checkDuplicates(budget);
  }

  // ---- the top-level object: { "items": ..., "totals": ..., anything else is skipped } ----

  private topStep(): void {
    const b = this.b;
    this.ws();
    if (this.phase === TOP_OPEN) {
      if (b[this.pos] !== 0x7b) throw this.notObject();
      this.pos++;
      this.ws();
      if (b[this.pos] === 0x7d) return this.endTop();
      this.phase = TOP_MEMBER;
      return;
    }
    if (this.phase === TOP_AFTER) {
      if (b[this.pos] === 0x7d) return this.endTop();
      if (b[this.pos] !== 0x2c) throw this.syntax();
      this.pos++;
      this.ws();
      this.phase = TOP_MEMBER;
      return;
    }
    // TOP_MEMBER
    if (b[this.pos] !== 0x22) throw this.syntax();
    const key = this.readString();
    this.colon();
    if (key === 'items') {
      if (this.sawItems) throw new ReportFormatError('items', 'appears twice in the body');
      this.sawItems = true;
      const c = b[this.pos];
      if (c === 0x7b || c === 0x5b) {
        this.open(c === 0x5b, 0, undefined, undefined);
        this.phase = IN_ITEMS;
        return;
      }
      const value = this.readScalar();
      throw new ReportFormatError(
        'items',
        `expected an object (keyed by ${this.dims[0]}) or a row of counters, found ${describe(value)}`,
      );
    }
    const value = this.readValue(0);
    if (key === 'totals') this.totals = value;
    this.phase = TOP_AFTER;
  }

  private endTop(): void {
    this.pos++;
    this.ws();
    if (this.pos < this.b.length) throw this.syntax('data after the end of the report');
    this.phase = DONE;
  }

  private notObject(): ReportFormatError {
    const c = this.b[this.pos];
    if (c === undefined) return this.syntax();
    if (c === 0x5b)
      return new ReportFormatError('(body)', 'expected an object with items and totals, found an array');
    return c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e
      ? new ReportFormatError(
          '(body)',
          `expected an object with items and totals, found ${describe(this.readValue(0))}`,
        )
      : this.syntax();
  }

  // ---- inside items: the streaming walk ----

  private itemsStep(): void {
    const b = this.b;
    const f = this.frames[this.top - 1] as Frame;
    this.ws();
    const close = f.isArray ? 0x5d : 0x7d;
    if (b[this.pos] === close) return this.close(f);
    if (f.state === 1) {
      if (b[this.pos] !== 0x2c) throw this.syntax();
      this.pos++;
      this.ws();
    }
    f.state = 1;
    if (f.isArray) {
      const c = b[this.pos];
      const index = f.index++;
      if (c === 0x7b || c === 0x5b) return this.open(c === 0x5b, f.depth, f, index);
      const value = this.readScalar();
      throw new ReportFormatError(
        childPath(f, index),
        `expected an object (keyed by ${this.dims[f.depth] ?? 'nothing more'}) or a row of counters, found ${describe(value)}`,
      );
    }
    this.member(f);
  }

  /** One `"key": value` of an object inside items. */
  private member(f: Frame): void {
    const b = this.b;
    if (b[this.pos] !== 0x22) throw this.syntax();
    const keyStart = this.pos + 1;
    const keyEnd = this.skipString();
    const escaped = this.escaped;
    this.colon();
    const c = b[this.pos];
    if (c === 0x7b || c === 0x5b) {
      const key = escaped ? this.keyText(keyStart, keyEnd, true) : this.shortKey(keyStart, keyEnd);
      if (f.sawScalar) throw this.mixed(f, key);
      if (f.depth >= this.dims.length) throw this.tooDeep(f);
      this.out.setKey(f.depth, key, f);
      f.sawContainer = true;
      this.open(c === 0x5b, f.depth + 1, f, key);
      return;
    }
    const value = this.readScalar();
    const which = escaped
      ? this.knownIndexOfText(this.keyText(keyStart, keyEnd, true))
      : this.knownIndex(keyStart, keyEnd);
    if (f.sawContainer) {
      const key = this.keyText(keyStart, keyEnd, escaped);
      throw new ReportFormatError(
        childPath(f, key),
        `expected an object (keyed by ${this.dims[f.depth] ?? 'nothing more'}) or a row of counters, found ${describe(value)}`,
      );
    }
    if (!f.sawScalar) {
      f.sawScalar = true;
      f.firstScalarKeyStart = keyStart;
      f.firstScalarKeyEnd = keyEnd;
      f.firstScalarEscaped = escaped;
      f.firstScalarValue = value;
    }
    if (which < 0) return;
    if (which < COUNTERS.length) {
      this.counterRaw[which] = value;
      // As JSON.parse + `!== undefined`: a null counter still makes a row (and then fails as null).
      f.sawCounter = true;
    } else this.dimRaw[which - COUNTERS.length] = value;
  }

  private open(isArray: boolean, depth: number, parent: Frame | undefined, key: Key): void {
    if (this.top >= NEST_LIMIT) throw new ReportFormatError(childPath(parent, key), 'nested too deeply');
    this.pos++;
    if (isArray) this.out.mayHaveDuplicates = true;
    else {
      // Only the innermost open object can be a row: its scalars go to the scratch fields.
      for (let d = 0; d < this.dimRaw.length; d++) this.dimRaw[d] = undefined;
      for (let i = 0; i < 5; i++) this.counterRaw[i] = undefined;
    }
    const f = this.frames[this.top];
    if (f === undefined) {
      this.frames.push({
        isArray,
        depth,
        parent,
        key,
        state: 0,
        index: 0,
        sawContainer: false,
        sawScalar: false,
        sawCounter: false,
        firstScalarKeyStart: 0,
        firstScalarKeyEnd: 0,
        firstScalarEscaped: false,
        firstScalarValue: undefined,
      });
    } else {
      f.isArray = isArray;
      f.depth = depth;
      f.parent = parent;
      f.key = key;
      f.state = 0;
      f.index = 0;
      f.sawContainer = false;
      f.sawScalar = false;
      f.sawCounter = false;
      f.firstScalarValue = undefined;
    }
    this.top++;
  }

  private close(f: Frame): void {
    this.pos++;
    if (!f.isArray) {
      if (f.sawCounter) this.out.emit(f.depth, this.dimRaw, this.counterRaw, f.parent, f.key);
      else if (f.sawScalar) {
        if (f.depth >= this.dims.length) throw this.tooDeep(f);
        throw new ReportFormatError(
          childPath(f, this.firstScalarKey(f)),
          `expected an object (keyed by ${this.dims[f.depth]}) or a row of counters, found ${describe(f.firstScalarValue)}`,
        );
      } else if (!f.sawContainer && f.depth >= this.dims.length) throw this.tooDeep(f);
    }
    this.top--;
    if (this.top === 0) this.phase = TOP_AFTER;
  }

  /**
   * The text of an unescaped key, shared between equal keys up to 6 ASCII bytes (countries, hours,
   * devices repeat under every parent): one string each instead of one per occurrence.
   */
  private shortKey(start: number, end: number): string {
    const len = end - start;
    if (len > 6) return this.keyText(start, end, false);
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

  private firstScalarKey(f: Frame): string {
    return this.keyText(f.firstScalarKeyStart, f.firstScalarKeyEnd, f.firstScalarEscaped);
  }

  private tooDeep(f: Frame): ReportFormatError {
    return new ReportFormatError(
      childPath(f.parent, f.key),
      `expected counters (${COUNTERS.join(', ')}) after ${this.dims.length} level(s) of dimensions (${this.dims.join(' > ')}), found an object without them`,
    );
  }

  private mixed(f: Frame, key: string): ReportFormatError {
    if (f.sawCounter)
      return new ReportFormatError(
        childPath(f, key),
        'a row of counters also holds a nested object or array',
      );
    return new ReportFormatError(
      childPath(f, this.firstScalarKey(f)),
      `expected an object (keyed by ${this.dims[f.depth] ?? 'nothing more'}) or a row of counters, found ${describe(f.firstScalarValue)}`,
    );
  }

  /** Index into `known` of the unescaped key bytes [start, end), or -1. */
  private knownIndex(start: number, end: number): number {
    const b = this.b;
    const len = end - start;
    const first = b[start];
    const known = this.known;
    outer: for (let k = 0; k < known.length; k++) {
      const name = known[k] as Buffer;
      if (name.length !== len || name[0] !== first) continue;
      for (let i = 1; i < len; i++) if (name[i] !== b[start + i]) continue outer;
      return k;
    }
    return -1;
  }

  private knownIndexOfText(key: string): number {
    return this.known.findIndex((k) => k.toString('latin1') === key);
  }

  // ---- JSON tokens ----

  private ws(): void {
    const b = this.b;
    let p = this.pos;
    for (;;) {
      const c = b[p];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      p++;
    }
    this.pos = p;
  }

  private colon(): void {
    this.ws();
    if (this.b[this.pos] !== 0x3a) throw this.syntax();
    this.pos++;
    this.ws();
  }

  /** Moves past the string at pos (validating it); returns the index of its closing quote. */
  private skipString(): number {
    const b = this.b;
    let p = this.pos + 1;
    this.escaped = false;
    for (;;) {
      const c = b[p];
      if (c === 0x22) break;
      if (c === undefined || c < 0x20) {
        this.pos = p;
        throw this.syntax();
      }
      if (c === 0x5c) {
        this.escaped = true;
        const e = b[p + 1];
        if (e === 0x75) {
          for (let i = 2; i < 6; i++) {
            if (hex(b[p + i]) < 0) {
              this.pos = p;
              throw this.syntax('a bad \\u escape');
            }
          }
          p += 6;
        } else if (
          e === 0x22 ||
          e === 0x5c ||
          e === 0x2f ||
          e === 0x62 ||
          e === 0x66 ||
          e === 0x6e ||
          e === 0x72 ||
          e === 0x74
        )
          p += 2;
        else {
          this.pos = p;
          throw this.syntax('a bad escape');
        }
      } else p++;
    }
    this.pos = p + 1;
    return p;
  }

  /** The text of the string whose content is bytes [start, end) (already validated). */
  private keyText(start: number, end: number, escaped: boolean): string {
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
        out += String.fromCharCode(
          (hex(b[p + 2]) << 12) | (hex(b[p + 3]) << 8) | (hex(b[p + 4]) << 4) | hex(b[p + 5]),
        );
        p += 6;
      } else {
        out +=
          e === 0x62
            ? '\b'
            : e === 0x66
              ? '\f'
              : e === 0x6e
                ? '\n'
                : e === 0x72
                  ? '\r'
                  : e === 0x74
                    ? '\t'
                    : String.fromCharCode(e as number);
        p += 2;
      }
      from = p;
    }
    return out + b.toString('utf8', from, end);
  }

  private readString(): string {
    const start = this.pos + 1;
    const end = this.skipString();
    return this.keyText(start, end, this.escaped);
  }

  /** A string, number, true, false or null at pos. */
  private readScalar(): unknown {
    const b = this.b;
    const c = b[this.pos];
    if (c === 0x22) return this.readString();
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return this.readNumber();
    if (c === 0x74 && this.literal('true')) return true;
    if (c === 0x66 && this.literal('false')) return false;
    if (c === 0x6e && this.literal('null')) return null;
    throw this.syntax();
  }

  private literal(word: string): boolean {
    for (let i = 1; i < word.length; i++) if (this.b[this.pos + i] !== word.charCodeAt(i)) return false;
    this.pos += word.length;
    return true;
  }

  /** A JSON number, by the JSON grammar; plain integers of up to 15 digits without a string. */
  private readNumber(): number {
    const b = this.b;
    const start = this.pos;
    let p = start;
    if (b[p] === 0x2d) p++;
    let n = 0;
    const digitsFrom = p;
    if (b[p] === 0x30) p++;
    else if (isDigit(b[p])) {
      while (isDigit(b[p])) n = n * 10 + ((b[p++] as number) - 0x30);
    } else {
      this.pos = p;
      throw this.syntax();
    }
    let plain = b[start] !== 0x2d && p - digitsFrom <= 15;
    if (b[p] === 0x2e) {
      plain = false;
      p++;
      if (!isDigit(b[p])) {
        this.pos = p;
        throw this.syntax();
      }
      while (isDigit(b[p])) p++;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      plain = false;
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (!isDigit(b[p])) {
        this.pos = p;
        throw this.syntax();
      }
      while (isDigit(b[p])) p++;
    }
    this.pos = p;
    return plain ? n : Number(b.toString('latin1', start, p));
  }

  /** Any JSON value, as JSON.parse would build it (objects without a prototype): for totals. */
  private readValue(level: number): unknown {
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
        this.colon();
        o[key] = this.readValue(level + 1);
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
        a.push(this.readValue(level + 1));
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

  private syntax(what?: string): ReportFormatError {
    const b = this.b;
    const at = this.pos;
    const c = b[at];
    if (b.length === 0 || (c === undefined && isBlank(b)))
      return new ReportFormatError('(body)', 'not valid JSON: an empty body');
    const found =
      what ??
      (c === undefined
        ? 'the body ends early (truncated?)'
        : `unexpected ${c >= 0x20 && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16)}`}`);
    // No excerpt of the body: the parser cannot redact the API key should a server echo it; the
    // offset finds the spot in the kept raw body.
    return new ReportFormatError('(body)', `not valid JSON: ${found} at byte ${at} of ${b.length}`);
  }
}

function isBlank(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** The value of a hex digit byte, or -1. */
function hex(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
