// From the scanner's leaves to typed rows (values checked, repeats refused), and their sums reconciled.
import {
  dimensionType,
  type Dimension,
  type DimensionType,
  COUNTERS,
  type CounterName,
} from '../platform/config/dimensions.js';
import { digits, isIsoDate } from '../platform/dates/calendar.js';
import {
  dimensionShapeError,
  dimensionValueError,
  ReportFormatError,
  showValue,
  type UnreconciledReason,
} from './errors.js';
import { type Counters, type ReportRow, type Totals } from './types.js';

/** A key inside a container: an object key, an array index, or none (the root). */
export type Key = string | number | undefined;

/** Spells out the path of `key` inside `parent`, e.g. `items["2026-01-01"][3]`; only for errors. */
export type PathOf<P> = (parent: P, key: Key) => string;

/** `typeof` plus a short excerpt, for messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `${typeof value} ${showValue(value)}`;
}

/** Collects typed rows from whichever walk found them, checking values, counters and repeats. */
export class RowBuilder<P> {
  readonly rows: ReportRow[] = [];
  readonly types: readonly DimensionType[];
  /** The dimension values of the row being built, set level by level. */
  private readonly vals: string[];
  /** The counters of the row being built. */
  private readonly counters: number[] = COUNTERS.map(() => 0);
  /** Last raw value and its canonical text per dimension: row objects repeat values a lot. */
  private readonly lastRaw: unknown[];
  private readonly lastValue: string[];
  /** Set when rows could collide: rows from arrays, or keys rewritten to canonical text. */
  mayHaveDuplicates = false;
  private checked = 0;
  private readonly seen = new Set<string>();

  constructor(
    readonly dims: readonly Dimension[],
    private readonly pathOf: PathOf<P>,
  ) {
    if (dims.length === 0) throw new RangeError('a report needs at least one dimension');
    this.types = dims.map(dimensionType);
    this.vals = dims.map(() => '');
    this.lastRaw = dims.map(() => undefined);
    this.lastValue = dims.map(() => '');
  }

  /** Sets dimension `d` from an object key found at `parent`/`key`. */
  setKey(d: number, key: string, parent: P): void {
    const type = this.types[d] as DimensionType;
    const value = canonicalDimensionValue(type, key);
    if (value === undefined) {
      // A key reading as another asked (non-text) dimension: wrong nesting, likely the request's fault.
      const other = this.dims.find(
        (o, i) =>
          i !== d &&
          this.types[i] !== 'text' &&
          canonicalDimensionValue(this.types[i] as DimensionType, key) !== undefined,
      );
      const path = this.pathOf(parent, key);
      if (other !== undefined)
        throw dimensionShapeError(
          path,
          `the key ${showValue(key)} sits where ${this.dims[d]} belongs but reads as ${other}, not as ${EXPECTED[type]}`,
          this.dims,
        );
      throw dimensionValueError(this.dims[d] as Dimension, key, EXPECTED[type], path);
    }
    if (value !== key) this.mayHaveDuplicates = true;
    this.vals[d] = value;
  }

  /** Adds the row of a leaf `depth` levels deep; `dimRaw`/`counterRaw` are its own fields (undefined: absent). */
  emit(depth: number, dimRaw: readonly unknown[], counterRaw: readonly unknown[], parent: P, key: Key): void {
    const dims = this.dims;
    for (let d = 0; d < dims.length; d++) {
      const raw = dimRaw[d];
      if (raw === undefined) {
        if (d < depth) continue;
        // Counters above the last dimension level: as a server that read another request form answers.
        throw dimensionShapeError(
          this.pathOf(parent, key),
          `a row of counters ${depth} level(s) deep has no ${dims[d]}: expected items nested in request order (${dims.join(' > ')}) or rows naming every dimension`,
          dims,
        );
      }
      let value: string | undefined;
      if (raw === this.lastRaw[d]) value = this.lastValue[d] as string;
      else {
        const type = this.types[d] as DimensionType;
        value = canonicalDimensionValue(type, raw);
        if (value === undefined)
          throw dimensionValueError(
            dims[d] as Dimension,
            raw,
            EXPECTED[type],
            `${this.pathOf(parent, key)}.${dims[d]}`,
          );
        this.lastRaw[d] = raw;
        this.lastValue[d] = value;
      }
      if (d >= depth) this.vals[d] = value;
      else if (value !== this.vals[d])
        throw new ReportFormatError(
          `${this.pathOf(parent, key)}.${dims[d]}`,
          `the row says ${dims[d]}=${showValue(value)} but sits under the key ${showValue(this.vals[d])}`,
        );
    }
    // Filled in place and copied: an array grown a push at a time is allocated for 17 values, not 5.
    const counters = this.counters;
    for (let i = 0; i < COUNTERS.length; i++) counters[i] = this.counter(counterRaw, i, parent, key);
    this.rows.push({ dims: this.vals.slice(), counters: counters.slice() });
  }

  private counter(counterRaw: readonly unknown[], i: number, parent: P, key: Key): number {
    const raw = counterRaw[i];
    const n = counterValue(raw);
    if (n < 0) {
      throw new ReportFormatError(
        `${this.pathOf(parent, key)}.${COUNTERS[i]}`,
        raw === undefined
          ? 'the counter is missing'
          : `the counter is ${describe(raw)}: expected a non-negative integer below 2^53 (or a string of digits)`,
      );
    }
    return n;
  }

  /** Checks up to `budget` rows for repeated dimension values (the table's unique key); true when done. */
  checkDuplicates(budget: number): boolean {
    if (!this.mayHaveDuplicates) return true;
    const rows = this.rows;
    const end = Math.min(rows.length, this.checked + Math.max(budget, 0));
    for (let r = this.checked; r < end; r++) {
      // NUL cannot occur in any canonical value (text rejects it), so it separates unambiguously.
      const id = (rows[r] as ReportRow).dims.join('\u0000');
      if (this.seen.has(id)) {
        const shown = this.dims.map((d, i) => `${d}=${(rows[r] as ReportRow).dims[i]}`).join(', ');
        throw new ReportFormatError('items', `two rows have the same dimension values (${shown})`);
      }
      this.seen.add(id);
    }
    this.checked = end;
    if (end < rows.length) return false;
    this.seen.clear();
    return true;
  }
}

/** `items["2026-01-01"][3]`: the path of a child of the container `parent` (undefined: the root). */
export function childPath(parent: { parent: unknown; key: Key } | undefined, key: Key): string {
  const base =
    parent === undefined
      ? 'items'
      : childPath(parent.parent as { parent: unknown; key: Key } | undefined, parent.key);
  if (key === undefined) return base;
  return typeof key === 'number' ? `${base}[${key}]` : `${base}[${JSON.stringify(key)}]`;
}

/** A counter as a non-negative safe integer (a number or quoted digits), else -1 (past 2^53 - 1: lossy). */
export function counterValue(raw: unknown): number {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw >= 0 ? raw : -1;
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 16) return -1;
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return Number.isSafeInteger(n) ? n : -1;
}

export const EXPECTED: Readonly<Record<DimensionType, string>> = {
  date: 'a date YYYY-MM-DD',
  bigint: 'a decimal integer within bigint range',
  smallint: 'an integer from -32768 to 32767',
  text: 'a string without NUL characters (or a finite number)',
};

const INT8_MAX = '9223372036854775807';
const INT8_MIN_ABS = '9223372036854775808';

/** A dimension value's canonical text for its column type (no leading zeros, no -0); undefined if unfit. */
export function canonicalDimensionValue(type: DimensionType, raw: unknown): string | undefined {
  switch (type) {
    case 'date':
      return typeof raw === 'string' && isIsoDate(raw) ? raw : undefined;
    case 'bigint':
      if (typeof raw === 'number') return Number.isSafeInteger(raw) ? String(raw === 0 ? 0 : raw) : undefined;
      return typeof raw === 'string' ? canonicalBigint(raw) : undefined;
    case 'smallint': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? smallIntFromText(raw) : NaN;
      return Number.isInteger(n) && n >= -32768 && n <= 32767 ? String(n === 0 ? 0 : n) : undefined;
    }
    case 'text':
      if (typeof raw === 'string') return raw.includes('\u0000') || !wellFormed(raw) ? undefined : raw;
      return typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
  }
}

declare global {
  interface String {
    /** ES2024, on Node 20+; TypeScript's ES2023 lib lacks its type. */
    isWellFormed(): boolean;
  }
}

/** No lone surrogates: Postgres would reject the text, and a silent U+FFFD would change the key. */
function wellFormed(s: string): boolean {
  return s.isWellFormed();
}

function canonicalBigint(s: string): string | undefined {
  const negative = s.charCodeAt(0) === 45;
  const first = negative ? 1 : 0;
  if (first === s.length) return undefined;
  for (let i = first; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  let start = first;
  while (start < s.length - 1 && s.charCodeAt(start) === 48) start++;
  // The common case (positive, no leading zero) returns the key itself: no allocation per value.
  const abs = start === 0 ? s : s.slice(start);
  const limit = negative ? INT8_MIN_ABS : INT8_MAX;
  if (abs.length > limit.length || (abs.length === limit.length && abs > limit)) return undefined;
  if (abs === '0') return '0';
  return negative ? `-${abs}` : abs;
}

function smallIntFromText(s: string): number {
  if (s.length === 0 || s.length > 6) return NaN;
  const negative = s.charCodeAt(0) === 45;
  const n = digits(s, negative ? 1 : 0, s.length);
  if (n < 0 || (negative && s.length === 1)) return NaN;
  return negative ? -n : n;
}

/** Outcome of comparing the rows' sums with the API's totals, counter by counter. */
export interface Reconciliation {
  readonly ok: boolean;
  /** One entry per given counter whose sum over the rows differs from the totals; empty when ok. */
  readonly differences: Array<{ counter: CounterName; items: number; totals: number }>;
  /** Why not ok: differences, no totals (nothing checked) or partial totals (not all checked). */
  readonly reason?: UnreconciledReason;
}

/** Sums each counter over the rows (exact: falls back to BigInt if a sum passes 2^53). */
export function sumRows(rows: readonly ReportRow[]): Counters {
  const sums = [0, 0, 0, 0, 0];
  for (let r = 0; r < rows.length; r++) {
    const c = (rows[r] as ReportRow).counters;
    for (let i = 0; i < 5; i++) sums[i]! += c[i]!;
  }
  const out = {} as Counters;
  COUNTERS.forEach((name, i) => {
    const s = sums[i]!;
    // Exact below 2^53; above, redo in BigInt and report the nearest Number (all JSON totals can show).
    out[name] = Number.isSafeInteger(s)
      ? s
      : Number(rows.reduce((acc, row) => acc + BigInt(row.counters[i]!), 0n));
  });
  return out;
}

export function reconcile(rows: readonly ReportRow[], totals: Totals): Reconciliation {
  return reconcileSums(sumRows(rows), totals);
}

/** Compares counter sums with the totals; without (all) totals a report is never called reconciled. */
export function reconcileSums(sums: Counters, totals: Totals): Reconciliation {
  const given = COUNTERS.filter((c) => totals[c] !== null);
  if (given.length === 0) return { ok: false, differences: [], reason: 'no totals' };
  const differences = given
    .filter((c) => sums[c] !== totals[c])
    .map((counter) => ({ counter, items: sums[counter], totals: totals[counter] as number }));
  if (given.length < COUNTERS.length) return { ok: false, differences, reason: 'partial totals' };
  return differences.length === 0
    ? { ok: true, differences }
    : { ok: false, differences, reason: 'mismatch' };
}
