import type { SpecDimension as Dimension } from '../spec.js';
import { SPEC_COUNTERS as COUNTERS } from '../spec.js';
import { COUNTER_COUNT, type DayCells } from './cells.js';
import { codeDimension, type CodedDimension } from './coding.js';
import type { TrafficModel } from './traffic.js';

/** One day's cells and the share of them reported so far (see lateFraction). */
export interface ReportedDay {
  readonly cells: DayCells;
  readonly num: number;
  readonly den: number;
}

const CHUNK = 64 * 1024;
const COUNTER_PREFIXES = COUNTERS.map((name, i) => `${i === 0 ? '{' : ','}"${name}":`);

function counterJson(sums: Float64Array): string {
  let s = '';
  for (let k = 0; k < COUNTER_COUNT; k++) s += (COUNTER_PREFIXES[k] ?? '') + String(sums[k]);
  return s + '}';
}

/**
 * A stable sort of cell indexes by their codes, lexicographic over the dimensions in request
 * order: LSD radix (one counting sort per dimension, last first), O(cells x dimensions).
 */
function sortCells(coded: readonly CodedDimension[], total: number): Uint32Array {
  let order = new Uint32Array(total);
  for (let i = 0; i < total; i++) order[i] = i;
  let next = new Uint32Array(total);
  for (let d = coded.length - 1; d >= 0; d--) {
    const { codes, keysJson } = coded[d] as CodedDimension;
    const starts = new Uint32Array(keysJson.length + 1);
    for (let i = 0; i < total; i++) starts[(codes[i] ?? 0) + 1]!++;
    for (let k = 1; k < starts.length; k++) starts[k]! += starts[k - 1] ?? 0;
    for (let i = 0; i < total; i++) {
      const cell = order[i] ?? 0;
      next[starts[codes[cell] ?? 0]!++] = cell;
    }
    [order, next] = [next, order];
  }
  return order;
}

/**
 * Renders the report body `{"items":{...},"totals":{...}}` as a sequence of string chunks of about
 * 64 KB, without building an object tree: cells are sorted by their dimension codes, equal leaves
 * are summed (each cell's counters floored by its day's late-data fraction first, so every dimension
 * set sums to the same totals), and nesting braces are opened and closed as the sorted walk moves.
 */
export function* renderReport(
  model: TrafficModel,
  days: readonly ReportedDay[],
  dimensions: readonly Dimension[],
): Generator<string> {
  const reported = days.filter((d) => d.num > 0);
  const cells = reported.map((d) => d.cells);
  const total = cells.reduce((s, c) => s + c.count, 0);
  // Per global cell index: which reported day it belongs to (for its fraction and its counters).
  const dayOf = new Uint16Array(total);
  const firstCell: number[] = [];
  let at = 0;
  reported.forEach((d, k) => {
    firstCell.push(at);
    dayOf.fill(k, at, at + d.cells.count);
    at += d.cells.count;
  });
  const coded = dimensions.map((dim) => codeDimension(dim, model, cells, total));
  const order = sortCells(coded, total);
  const depth = coded.length;
  const totals = new Float64Array(COUNTER_COUNT);
  const leaf = new Float64Array(COUNTER_COUNT);
  let out = '{"items":{';
  let prev = -1;
  const differsFrom = (a: number, b: number): number => {
    for (let d = 0; d < depth; d++) if (coded[d]!.codes[a] !== coded[d]!.codes[b]) return d;
    return depth;
  };
  const openFrom = (level: number, cell: number) => {
    for (let d = level; d < depth; d++) {
      out += coded[d]!.keysJson[coded[d]!.codes[cell] ?? 0] + (d < depth - 1 ? ':{' : ':');
    }
  };
  for (let i = 0; i < total; i++) {
    const cell = order[i] ?? 0;
    const level = prev < 0 ? -1 : differsFrom(prev, cell);
    if (level !== depth) {
      if (prev >= 0) {
        out += counterJson(leaf);
        for (let d = depth - 2; d >= level; d--) out += '}';
        out += ',';
      }
      leaf.fill(0);
      openFrom(level < 0 ? 0 : level, cell);
      if (out.length >= CHUNK) {
        yield out;
        out = '';
      }
    }
    const k = dayOf[cell] ?? 0;
    const day = reported[k]!;
    const base = (cell - (firstCell[k] ?? 0)) * COUNTER_COUNT;
    for (let c = 0; c < COUNTER_COUNT; c++) {
      const value =
        day.num === day.den
          ? day.cells.counters[base + c]!
          : Math.floor((day.cells.counters[base + c]! * day.num) / day.den);
      leaf[c]! += value;
      totals[c]! += value;
    }
    prev = cell;
  }
  if (prev >= 0) {
    out += counterJson(leaf);
    for (let d = depth - 2; d >= 0; d--) out += '}';
  }
  out += '},"totals":' + counterJson(totals) + '}';
  yield out;
}
