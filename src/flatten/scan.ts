// The report scanner: walks `items` (nested per dimension) and `totals` into rows, refusing repeated keys.
import { type Dimension, COUNTERS } from '../platform/config/dimensions.js';
import { DUPLICATE_KEY, ReportFormatError } from './errors.js';
import { childPath, describe, RowBuilder, type Key } from './rows.js';
import { JSON_START, JsonCursor, NEED_MORE, NEST_LIMIT, memberPath } from './json-cursor.js';
import { type ReportRow } from './types.js';

/** Up to this many sibling keys are compared one by one; beyond, through the frame's Map. */
const LINEAR_KEYS = 8;
/** Keys a level's Map keeps before it is cleared (it holds every key met at its level since). */
const KEPT_KEYS = 4096;

/** An open container of `items`; paths are spelled out from these links only for an error. */
class Frame {
  isArray = false;
  /** How many dimension values the keys above this container have set. */
  depth = 0;
  parent: Frame | undefined = undefined;
  key: Key = undefined;
  /** 0: just opened, 1: after a member (expects `,` or the close). */
  state = 0;
  /** Array: index of the next element. */
  index = 0;
  /** Object: holds a nested container (so it is a level of keys, not a row). */
  sawContainer = false;
  /** Object: holds a scalar field (so it must be a row of counters). */
  sawScalar = false;
  sawCounter = false;
  /** The first scalar field, kept as byte offsets: its key text is only needed for an error. */
  firstScalarKeyStart = 0;
  firstScalarKeyEnd = 0;
  firstScalarEscaped = false;
  firstScalarValue: unknown = undefined;
  /** The first scalar's key as text, once its bytes have left the window (a streamed body). */
  firstScalarKeyText: string | undefined = undefined;
  /** Object: the keys of its nested containers so far (the first `keyCount`), to catch a key given twice. */
  readonly keys: string[] = new Array<string>(LINEAR_KEYS).fill('');
  keyCount = 0;
  /** Beyond LINEAR_KEYS: each key, with the `opened` stamp of the object it was last seen in. Kept from one
   * object to the next at this level (a cleared Set or array is reallocated: garbage every object). */
  readonly keySet = new Map<string, number>();
  /** Tells this object's keys in keySet from an earlier object's at the same level. */
  opened = 0;
}

// Phases of the top-level object around `items`.
const TOP_OPEN = 0;
const TOP_MEMBER = 1;
const TOP_AFTER = 2;
const IN_ITEMS = 3;
const DONE = 4;

/** Bytes a unit needs ahead in a non-last window: far more than any unit, so rewinds are rare. */
export const UNIT_MARGIN = 64 * 1024;

/** Streams a GET /reports body into rows in bounded steps, building no tree (a million leaves would cost a GB
 * of heap); accepts what JSON.parse would, except counters beside nested objects and keys given twice. */
export class ReportScanner {
  private readonly c: JsonCursor;
  private phase = TOP_OPEN;
  /** Open containers, innermost last, reused level by level (not millions of short-lived frames). */
  private readonly frames: Frame[] = [];
  private top = 0;
  private readonly out: RowBuilder<Frame | undefined>;
  private readonly dimRaw: unknown[];
  private readonly counterRaw: unknown[] = [undefined, undefined, undefined, undefined, undefined];
  /** Field names a row may hold: COUNTERS[0..4], then the dimensions, as bytes. */
  private readonly known: Buffer[];
  private sawItems = false;
  /** Objects opened so far: each one's stamp in its frame (Frame.opened). */
  private opened = 0;
  /** The top-level keys read so far besides items, to refuse one given twice (`totals`, ...). */
  private readonly topKeys = new Set<string>();
  totals: unknown = undefined;
  /** Bytes a unit of a window that is not the last needs ahead of it (UNIT_MARGIN; tests: less). */
  private readonly margin: number;
  /** Set when step() stopped because the window is read up to its margin: feed() the next bytes. */
  hungry = false;

  /** `body`: the whole body, or (with `final: false`) its first window; feed() the rest. */
  constructor(
    body: Buffer,
    private readonly dims: readonly Dimension[],
    options: { readonly final?: boolean; readonly margin?: number } = {},
  ) {
    this.margin = options.margin ?? UNIT_MARGIN;
    this.c = new JsonCursor(body, options.final ?? true);
    this.out = new RowBuilder(dims, childPath);
    this.dimRaw = dims.map(() => undefined);
    this.known = [...COUNTERS, ...dims].map((n) => Buffer.from(n, 'latin1'));
    if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) this.c.pos = 3;
  }

  get rows(): ReportRow[] {
    return this.out.rows;
  }

  get offset(): number {
    return this.c.base + this.c.pos;
  }

  /** The next window of a streamed body (`final`: the last); the bytes not yet read stay in front of it. */
  feed(chunk: Buffer, final: boolean): void {
    const c = this.c;
    if (this.phase === DONE) {
      c.shift(chunk, final);
      return this.nothingAfter();
    }
    // Keys of open frames still pointing into this window are spelled out before it goes.
    for (let i = 0; i < this.top; i++) {
      const f = this.frames[i] as Frame;
      if (f.sawScalar && f.firstScalarKeyText === undefined)
        f.firstScalarKeyText = c.keyText(f.firstScalarKeyStart, f.firstScalarKeyEnd, f.firstScalarEscaped);
    }
    const first = c.base === 0 && c.pos === 0;
    c.shift(chunk, final);
    if (first && c.b[0] === 0xef && c.b[1] === 0xbb && c.b[2] === 0xbf) c.pos = 3;
    this.hungry = false;
  }

  /** Does up to about `budget` units of work; true when done, false when spent or `hungry` for bytes. */
  step(budget: number): boolean {
    while (this.phase !== DONE) {
      if (budget-- <= 0) return false;
      if (!this.c.final) {
        if (!this.guardedUnit()) {
          this.hungry = true;
          return false;
        }
      } else if (this.phase === IN_ITEMS) this.itemsStep();
      else this.topStep();
    }
    if (!this.c.final) {
      // The closing brace came; what follows it is checked as it arrives.
      this.hungry = true;
      return false;
    }
    if (!this.sawItems) throw new ReportFormatError('items', 'missing: expected the report items');
    return this.out.checkDuplicates(budget);
  }

  /** Whether the body has been read to its end (a streamed one: its last window fed and read). */
  get done(): boolean {
    return this.phase === DONE && this.c.final;
  }

  /** One unit of a window that is not the last: false, the unit undone, when it needs bytes beyond it. */
  private guardedUnit(): boolean {
    const c = this.c;
    c.ws();
    if (c.pos + this.margin > c.b.length) return false;
    const pos = c.pos;
    const phase = this.phase;
    const sawItems = this.sawItems;
    const f = this.top > 0 ? (this.frames[this.top - 1] as Frame) : undefined;
    const state = f?.state ?? 0;
    const index = f?.index ?? 0;
    try {
      if (phase === IN_ITEMS) this.itemsStep();
      else this.topStep();
      return true;
    } catch (error) {
      if (error !== NEED_MORE) throw error;
      // Nothing a unit changes before its last byte is read but these: put them back.
      c.pos = pos;
      this.phase = phase;
      this.sawItems = sawItems;
      if (f !== undefined) {
        f.state = state;
        f.index = index;
      }
      return false;
    }
  }

  // ---- the top-level object: { "items": ..., "totals": ..., anything else is skipped } ----

  private topStep(): void {
    const b = this.c.b;
    this.c.ws();
    if (this.phase === TOP_OPEN) {
      if (b[this.c.pos] !== 0x7b) throw this.notObject();
      this.c.pos++;
      this.c.ws();
      if (b[this.c.pos] === 0x7d) return this.endTop();
      this.phase = TOP_MEMBER;
      return;
    }
    if (this.phase === TOP_AFTER) {
      if (b[this.c.pos] === 0x7d) return this.endTop();
      if (b[this.c.pos] !== 0x2c) throw this.c.syntax();
      this.c.pos++;
      this.c.ws();
      this.phase = TOP_MEMBER;
      return;
    }
    if (b[this.c.pos] !== 0x22) throw this.c.syntax();
    const key = this.c.readString();
    this.c.colon();
    if (key === 'items') {
      if (this.sawItems) throw new ReportFormatError('items', 'appears twice in the body');
      this.sawItems = true;
      const c = b[this.c.pos];
      if (c === 0x7b || c === 0x5b) {
        this.open(c === 0x5b, 0, undefined, undefined);
        this.phase = IN_ITEMS;
        return;
      }
      throw this.notRow('items', 0, this.c.readScalar());
    }
    const path = topPath(key);
    if (this.topKeys.has(key)) throw new ReportFormatError(path, DUPLICATE_KEY);
    const value = this.c.readValue(0, path);
    // Only once the value is read: a unit rewound at a window's end reads the key again.
    this.topKeys.add(key);
    if (key === 'totals') this.totals = value;
    this.phase = TOP_AFTER;
  }

  private endTop(): void {
    this.c.pos++;
    this.nothingAfter();
    this.phase = DONE;
  }

  private nothingAfter(): void {
    this.c.ws();
    if (this.c.pos < this.c.b.length) {
      this.c.final = true; // an error wherever the window ends
      throw this.c.syntax('data after the end of the report');
    }
  }

  private notObject(): ReportFormatError {
    const c = this.c.b[this.c.pos];
    if (c === undefined) return this.c.syntax();
    if (c === 0x5b)
      return new ReportFormatError('(body)', 'expected an object with items and totals, found an array');
    return JSON_START.has(c)
      ? new ReportFormatError(
          '(body)',
          `expected an object with items and totals, found ${describe(this.c.readValue(0, '(body)'))}`,
        )
      : this.c.syntax();
  }

  // ---- inside items: the streaming walk ----

  private itemsStep(): void {
    const b = this.c.b;
    const f = this.frames[this.top - 1] as Frame;
    this.c.ws();
    const close = f.isArray ? 0x5d : 0x7d;
    if (b[this.c.pos] === close) return this.close(f);
    if (f.state === 1) {
      if (b[this.c.pos] !== 0x2c) throw this.c.syntax();
      this.c.pos++;
      this.c.ws();
    }
    f.state = 1;
    if (f.isArray) {
      const c = b[this.c.pos];
      const index = f.index++;
      if (c === 0x7b || c === 0x5b) return this.open(c === 0x5b, f.depth, f, index);
      throw this.notRow(childPath(f, index), f.depth, this.c.readScalar());
    }
    this.member(f);
  }

  private member(f: Frame): void {
    const b = this.c.b;
    if (b[this.c.pos] !== 0x22) throw this.c.syntax();
    const keyStart = this.c.pos + 1;
    const keyEnd = this.c.skipString();
    const escaped = this.c.escaped;
    this.c.colon();
    const c = b[this.c.pos];
    if (c === 0x7b || c === 0x5b) {
      const key = escaped ? this.c.keyText(keyStart, keyEnd, true) : this.c.shortKey(keyStart, keyEnd);
      if (f.sawScalar) throw this.mixed(f, key);
      if (f.depth >= this.dims.length) throw this.tooDeep(f);
      this.out.setKey(f.depth, key, f);
      this.checkSibling(f, key);
      f.sawContainer = true;
      this.open(c === 0x5b, f.depth + 1, f, key);
      return;
    }
    const value = this.c.readScalar();
    const which = escaped
      ? this.knownIndexOfText(this.c.keyText(keyStart, keyEnd, true))
      : this.c.knownIndex(this.known, keyStart, keyEnd);
    if (f.sawContainer)
      throw this.notRow(childPath(f, this.c.keyText(keyStart, keyEnd, escaped)), f.depth, value);
    if (!f.sawScalar) {
      f.sawScalar = true;
      f.firstScalarKeyStart = keyStart;
      f.firstScalarKeyEnd = keyEnd;
      f.firstScalarEscaped = escaped;
      f.firstScalarValue = value;
    }
    // A field given twice (JSON.parse would quietly keep the last): scratch fields are cleared as each object
    // opens, so one already set is set twice in this row; any other is checked through the frame's keys.
    if (which < 0) {
      this.checkSibling(
        f,
        escaped ? this.c.keyText(keyStart, keyEnd, true) : this.c.shortKey(keyStart, keyEnd),
      );
      return;
    }
    if (which < COUNTERS.length) {
      if (this.counterRaw[which] !== undefined) throw this.twice(f, which);
      this.counterRaw[which] = value;
      // As JSON.parse + `!== undefined`: a null counter still makes a row (and then fails as null).
      f.sawCounter = true;
    } else {
      if (this.dimRaw[which - COUNTERS.length] !== undefined) throw this.twice(f, which);
      this.dimRaw[which - COUNTERS.length] = value;
    }
  }

  /** The error for the known field `which` (a COUNTERS index, then the dimensions) given twice. */
  private twice(f: Frame, which: number): ReportFormatError {
    const name = which < COUNTERS.length ? COUNTERS[which] : this.dims[which - COUNTERS.length];
    return new ReportFormatError(`${childPath(f.parent, f.key)}.${name}`, DUPLICATE_KEY);
  }

  private open(isArray: boolean, depth: number, parent: Frame | undefined, key: Key): void {
    if (this.top >= NEST_LIMIT) throw new ReportFormatError(childPath(parent, key), 'nested too deeply');
    this.c.pos++;
    if (isArray) this.out.mayHaveDuplicates = true;
    else {
      // Only the innermost open object can be a row: its scalars go to the scratch fields.
      for (let d = 0; d < this.dimRaw.length; d++) this.dimRaw[d] = undefined;
      for (let i = 0; i < 5; i++) this.counterRaw[i] = undefined;
    }
    const f = (this.frames[this.top] ??= new Frame());
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
    f.firstScalarKeyText = undefined;
    f.keyCount = 0;
    f.opened = ++this.opened;
    if (f.keySet.size > KEPT_KEYS) f.keySet.clear();
    this.top++;
  }

  private close(f: Frame): void {
    this.c.pos++;
    if (!f.isArray) {
      if (f.sawCounter) this.out.emit(f.depth, this.dimRaw, this.counterRaw, f.parent, f.key);
      else if (f.sawScalar) {
        if (f.depth >= this.dims.length) throw this.tooDeep(f);
        throw this.notRow(childPath(f, this.firstScalarKey(f)), f.depth, f.firstScalarValue);
      } else if (!f.sawContainer && f.depth >= this.dims.length) throw this.tooDeep(f);
    }
    this.top--;
    if (this.top === 0) this.phase = TOP_AFTER;
  }

  /** JSON.parse keeps the last of two equal keys; here both would become rows, silently doubling. Fail. */
  private checkSibling(f: Frame, key: string): void {
    const keys = f.keys;
    let twice = false;
    if (f.keyCount < LINEAR_KEYS) {
      for (let i = 0; i < f.keyCount; i++) if (keys[i] === key) twice = true;
      keys[f.keyCount++] = key;
      if (f.keyCount === LINEAR_KEYS) for (const k of keys) f.keySet.set(k, f.opened);
    } else {
      twice = f.keySet.get(key) === f.opened;
      f.keySet.set(key, f.opened);
    }
    if (twice)
      throw new ReportFormatError(
        f.sawScalar ? `${childPath(f.parent, f.key)}.${key}` : childPath(f, key),
        DUPLICATE_KEY,
      );
  }

  private firstScalarKey(f: Frame): string {
    if (f.firstScalarKeyText !== undefined) return f.firstScalarKeyText;
    return this.c.keyText(f.firstScalarKeyStart, f.firstScalarKeyEnd, f.firstScalarEscaped);
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
    return this.notRow(childPath(f, this.firstScalarKey(f)), f.depth, f.firstScalarValue);
  }

  /** The error for a scalar where an object keyed by the next dimension, or a row, belongs. */
  private notRow(path: string, depth: number, value: unknown): ReportFormatError {
    return new ReportFormatError(
      path,
      `expected an object (keyed by ${this.dims[depth] ?? 'nothing more'}) or a row of counters, found ${describe(value)}`,
    );
  }

  private knownIndexOfText(key: string): number {
    return this.known.findIndex((k) => k.toString('latin1') === key);
  }
}

/** The path of a top-level member in an error: `totals`, or `["odd key"]`. */
function topPath(key: string): string {
  return memberPath('', key).replace(/^\./, '');
}
