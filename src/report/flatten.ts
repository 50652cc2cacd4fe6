import { dimensionType, type Dimension, type DimensionType } from '../config/dimensions.js';
import { counterValue, holdsCounters } from './counters.js';
import { canonicalDimensionValue, EXPECTED } from './dimension-value.js';
import { DimensionValueError, ReportFormatError, showValue } from './errors.js';
import { COUNTERS, type ReportRow } from './types.js';

/** One container being walked: an object keyed by the next dimension's values, or an array of nodes. */
interface Frame {
  readonly object: Record<string, unknown> | undefined;
  readonly array: readonly unknown[] | undefined;
  readonly keys: readonly string[] | undefined;
  i: number;
  /** How many dimension values the keys above this container have set. */
  readonly depth: number;
  /** Where this container sits: paths are only spelled out for an error, never per node. */
  readonly parent: Frame | undefined;
  readonly key: Key;
}

type Key = string | number | undefined;

/** `items["2026-01-01"][3]`: the path of a child of the container `parent` (undefined: the root). */
function childPath(parent: Frame | undefined, key: Key): string {
  const base = parent === undefined ? 'items' : childPath(parent.parent, parent.key);
  if (key === undefined) return base;
  return typeof key === 'number' ? `${base}[${key}]` : `${base}[${JSON.stringify(key)}]`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `${typeof value} ${showValue(value)}`;
}

/**
 * Walks a report's `items` into rows, in bounded steps so a caller can yield between them.
 * A node holding counters is a leaf at whatever depth; object keys above it give the dimension
 * values in request order, and the leaf's own fields give the rest (so an array of row objects
 * works as well as full nesting). Everything else is a ReportFormatError naming the path.
 */
export class Flattener {
  readonly rows: ReportRow[] = [];
  private readonly stack: Frame[] = [];
  private readonly types: readonly DimensionType[];
  private readonly vals: string[];
  /** Last raw value and its canonical text per dimension: row objects repeat values a lot. */
  private readonly lastRaw: unknown[];
  private readonly lastValue: string[];
  /** Set when rows could collide: rows from arrays, or keys rewritten to canonical text. */
  private mayHaveDuplicates = false;
  private checked = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly dims: readonly Dimension[],
    items: unknown,
  ) {
    if (dims.length === 0) throw new RangeError('a report needs at least one dimension');
    this.types = dims.map(dimensionType);
    this.vals = dims.map(() => '');
    this.lastRaw = dims.map(() => undefined);
    this.lastValue = dims.map(() => '');
    this.visit(items, 0, undefined, undefined);
  }

  /** Does up to `budget` units of work; true when all rows are out and checked for duplicates. */
  step(budget: number): boolean {
    const stack = this.stack;
    while (stack.length > 0) {
      if (budget-- <= 0) return false;
      const f = stack[stack.length - 1] as Frame;
      if (f.keys !== undefined) {
        if (f.i >= f.keys.length) {
          stack.pop();
          continue;
        }
        const key = f.keys[f.i++] as string;
        const d = f.depth;
        const type = this.types[d] as DimensionType;
        const value = canonicalDimensionValue(type, key);
        if (value === undefined)
          throw new DimensionValueError(this.dims[d] as Dimension, key, EXPECTED[type], childPath(f, key));
        if (value !== key) this.mayHaveDuplicates = true;
        this.vals[d] = value;
        this.visit((f.object as Record<string, unknown>)[key], d + 1, f, key);
      } else {
        const array = f.array as readonly unknown[];
        if (f.i >= array.length) {
          stack.pop();
          continue;
        }
        const i = f.i++;
        this.visit(array[i], f.depth, f, i);
      }
    }
    return this.mayHaveDuplicates ? this.checkDuplicates(budget) : true;
  }

  private visit(node: unknown, depth: number, parent: Frame | undefined, key: Key): void {
    if (typeof node !== 'object' || node === null) {
      throw new ReportFormatError(
        childPath(parent, key),
        `expected an object (keyed by ${this.dims[depth] ?? 'nothing more'}) or a row of counters, found ${describe(node)}`,
      );
    }
    if (Array.isArray(node)) {
      this.mayHaveDuplicates = true;
      this.stack.push({ object: undefined, array: node, keys: undefined, i: 0, depth, parent, key });
      return;
    }
    const object = node as Record<string, unknown>;
    if (holdsCounters(object)) {
      this.emit(object, depth, parent, key);
      return;
    }
    if (depth >= this.dims.length) {
      throw new ReportFormatError(
        childPath(parent, key),
        `expected counters (${COUNTERS.join(', ')}) after ${this.dims.length} level(s) of dimensions (${this.dims.join(' > ')}), found an object without them`,
      );
    }
    this.stack.push({ object, array: undefined, keys: Object.keys(object), i: 0, depth, parent, key });
  }

  private emit(leaf: Record<string, unknown>, depth: number, parent: Frame | undefined, key: Key): void {
    const dims = this.dims;
    for (let d = 0; d < dims.length; d++) {
      const name = dims[d] as Dimension;
      const raw = leaf[name];
      if (raw === undefined) {
        if (d < depth) continue;
        throw new ReportFormatError(
          childPath(parent, key),
          `a row of counters ${depth} level(s) deep has no ${name}: expected items nested in request order (${dims.join(' > ')}) or rows naming every dimension`,
        );
      }
      let value: string | undefined;
      if (raw === this.lastRaw[d]) value = this.lastValue[d];
      else {
        value = canonicalDimensionValue(this.types[d] as DimensionType, raw);
        if (value === undefined) {
          const type = this.types[d] as DimensionType;
          throw new DimensionValueError(name, raw, EXPECTED[type], `${childPath(parent, key)}.${name}`);
        }
        this.lastRaw[d] = raw;
        this.lastValue[d] = value;
      }
      if (d < depth) {
        if (value !== this.vals[d])
          throw new ReportFormatError(
            `${childPath(parent, key)}.${name}`,
            `the row says ${name}=${showValue(value)} but sits under the key ${showValue(this.vals[d])}`,
          );
      } else this.vals[d] = value as string;
    }
    const a = this.counter(leaf, 0, parent, key);
    const b = this.counter(leaf, 1, parent, key);
    const c = this.counter(leaf, 2, parent, key);
    const m = this.counter(leaf, 3, parent, key);
    const v = this.counter(leaf, 4, parent, key);
    this.rows.push({ dims: this.vals.slice(), counters: [a, b, c, m, v] });
  }

  private counter(leaf: Record<string, unknown>, index: number, parent: Frame | undefined, key: Key): number {
    const name = COUNTERS[index] as string;
    const raw = leaf[name];
    const n = counterValue(raw);
    if (n < 0) {
      throw new ReportFormatError(
        `${childPath(parent, key)}.${name}`,
        raw === undefined
          ? 'the counter is missing'
          : `the counter is ${describe(raw)}: expected a non-negative integer below 2^53 (or a string of digits)`,
      );
    }
    return n;
  }

  /** Rows with the same dimension values would violate the table's unique key: fail here instead. */
  private checkDuplicates(budget: number): boolean {
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
