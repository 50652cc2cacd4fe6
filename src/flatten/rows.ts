import { dimensionType, type Dimension, type DimensionType } from '../config/dimensions.js';
import { counterValue } from './counters.js';
import { canonicalDimensionValue, EXPECTED } from './dimension-value.js';
import { DimensionValueError, ReportFormatError, showValue } from './errors.js';
import { COUNTERS, type ReportRow } from './types.js';

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

/**
 * Collects typed rows from dimension values and counters, whichever walk found them: checks each
 * value against its column type, each counter, and finally that no two rows share dimension values.
 */
export class RowBuilder<P> {
  readonly rows: ReportRow[] = [];
  readonly types: readonly DimensionType[];
  /** The dimension values of the row being built, set level by level. */
  private readonly vals: string[];
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
    if (value === undefined)
      throw new DimensionValueError(this.dims[d] as Dimension, key, EXPECTED[type], this.pathOf(parent, key));
    if (value !== key) this.mayHaveDuplicates = true;
    this.vals[d] = value;
  }

  /**
   * Adds the row of a leaf found `depth` levels deep at `parent`/`key`. `dimRaw[d]` is the leaf's
   * own field for dimension d (undefined when absent), `counterRaw[i]` its field for COUNTERS[i].
   */
  emit(depth: number, dimRaw: readonly unknown[], counterRaw: readonly unknown[], parent: P, key: Key): void {
    const dims = this.dims;
    for (let d = 0; d < dims.length; d++) {
      const raw = dimRaw[d];
      if (raw === undefined) {
        if (d < depth) continue;
        throw new ReportFormatError(
          this.pathOf(parent, key),
          `a row of counters ${depth} level(s) deep has no ${dims[d]}: expected items nested in request order (${dims.join(' > ')}) or rows naming every dimension`,
        );
      }
      let value: string | undefined;
      if (raw === this.lastRaw[d]) value = this.lastValue[d] as string;
      else {
        const type = this.types[d] as DimensionType;
        value = canonicalDimensionValue(type, raw);
        if (value === undefined)
          throw new DimensionValueError(
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
    const a = this.counter(counterRaw, 0, parent, key);
    const b = this.counter(counterRaw, 1, parent, key);
    const c = this.counter(counterRaw, 2, parent, key);
    const m = this.counter(counterRaw, 3, parent, key);
    const v = this.counter(counterRaw, 4, parent, key);
    this.rows.push({ dims: this.vals.slice(), counters: [a, b, c, m, v] });
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

  /**
   * Checks up to `budget` rows for repeated dimension values (they would break the table's
   * unique key); true when all are checked.
   */
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
