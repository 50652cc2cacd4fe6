// The reference parsers that tests and benches hold the product's scanner to: the tree walk of a
// body already parsed with JSON.parse (Flattener, parseReportObject), and parseReport yielding to
// the event loop as it goes (parseReportAsync).
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type Dimension, COUNTERS } from '../../src/platform/config/dimensions.js';
import { childPath, describe, RowBuilder, type Key } from '../../src/flatten/rows.js';
import { ReportFormatError, showValue } from '../../src/flatten/errors.js';
import {
  finish,
  readTotals,
  toBuffer,
  type ParsedReport,
  type ParseOptions,
} from '../../src/flatten/parse.js';
import { ReportScanner } from '../../src/flatten/scan.js';
import { type ReportRow } from '../../src/flatten/types.js';

export interface AsyncParseOptions extends ParseOptions {
  /** Units of work (about one per leaf) between yields to the event loop; default 20,000. */
  readonly chunk?: number;
}

/**
 * parseReport that yields to the event loop every `chunk` members, so a long parse does not stall
 * timers, sockets or BullMQ's lock renewal.
 */
export async function parseReportAsync(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: AsyncParseOptions = {},
): Promise<ParsedReport> {
  const chunk = options.chunk ?? 20_000;
  const scanner = new ReportScanner(toBuffer(body), dimensions);
  while (!scanner.step(chunk)) await yieldToEventLoop();
  return finish(scanner.rows, readTotals(scanner.totals), options);
}

/**
 * The same result from a body already parsed with JSON.parse (e.g. a stored object), through the
 * tree walk. parseReport and this agree on every accepted body.
 */
export function parseReportObject(
  doc: unknown,
  dimensions: readonly Dimension[],
  options: ParseOptions = {},
): ParsedReport {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ReportFormatError(
      '(body)',
      `expected an object with items and totals, found ${Array.isArray(doc) ? 'an array' : showValue(doc)}`,
    );
  }
  const top = doc as Record<string, unknown>;
  if (top.items === undefined) throw new ReportFormatError('items', 'missing: expected the report items');
  const flattener = new Flattener(dimensions, top.items);
  flattener.step(Infinity);
  return finish(flattener.rows, readTotals(top.totals), options);
}

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
    // Holding a counter is what makes an object a leaf, whatever its depth.
    if (COUNTERS.some((c) => object[c] !== undefined)) {
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
