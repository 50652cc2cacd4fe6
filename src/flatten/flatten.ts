import type { Dimension } from '../config/dimensions.js';
import { holdsCounters } from './counters.js';
import { ReportFormatError } from './errors.js';
import { describe, RowBuilder, type Key } from './rows.js';
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

/** `items["2026-01-01"][3]`: the path of a child of the container `parent` (undefined: the root). */
export function childPath(parent: { parent: unknown; key: Key } | undefined, key: Key): string {
  const base =
    parent === undefined
      ? 'items'
      : childPath(parent.parent as { parent: unknown; key: Key } | undefined, parent.key);
  if (key === undefined) return base;
  return typeof key === 'number' ? `${base}[${key}]` : `${base}[${JSON.stringify(key)}]`;
}

/**
 * Walks an already parsed report's `items` into rows, in bounded steps. The reference walk:
 * parseReport streams the body with ReportScanner instead, which must agree with this one
 * (a property test holds them to it). A node holding counters is a leaf at whatever depth; object
 * keys above it give the dimension values in request order, and the leaf's own fields give the
 * rest (so an array of row objects works as well as full nesting).
 */
export class Flattener {
  private readonly stack: Frame[] = [];
  private readonly out: RowBuilder<Frame | undefined>;
  private readonly dimRaw: unknown[];
  private readonly counterRaw: unknown[] = [0, 0, 0, 0, 0];

  constructor(
    private readonly dims: readonly Dimension[],
    items: unknown,
  ) {
    this.out = new RowBuilder(dims, childPath);
    this.dimRaw = dims.map(() => undefined);
    this.visit(items, 0, undefined, undefined);
  }

  get rows(): ReportRow[] {
    return this.out.rows;
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
        this.out.setKey(f.depth, key, f);
        this.visit((f.object as Record<string, unknown>)[key], f.depth + 1, f, key);
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
    return this.out.checkDuplicates(budget);
  }

  private visit(node: unknown, depth: number, parent: Frame | undefined, key: Key): void {
    if (typeof node !== 'object' || node === null) {
      throw new ReportFormatError(
        childPath(parent, key),
        `expected an object (keyed by ${this.dims[depth] ?? 'nothing more'}) or a row of counters, found ${describe(node)}`,
      );
    }
    if (Array.isArray(node)) {
      this.out.mayHaveDuplicates = true;
      this.stack.push({ object: undefined, array: node, keys: undefined, i: 0, depth, parent, key });
      return;
    }
    const object = node as Record<string, unknown>;
    if (holdsCounters(object)) {
      for (let d = 0; d < this.dims.length; d++) this.dimRaw[d] = object[this.dims[d] as string];
      for (let i = 0; i < COUNTERS.length; i++) this.counterRaw[i] = object[COUNTERS[i] as string];
      this.out.emit(depth, this.dimRaw, this.counterRaw, parent, key);
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
}
