import type { SpecDimension as Dimension } from '../spec.js';
import { COUNTER_COUNT, type DayCells } from './cells.js';
import { codeDimension, type CodedDimension, type KeyOrder } from './coding.js';
import type { TrafficModel } from './traffic.js';

/** One day's cells and the share of them reported so far (see lateFraction). */
export interface ReportedDay {
  readonly cells: DayCells;
  readonly num: number;
  readonly den: number;
}

/** The cells of a request, coded by dimension and sorted into leaf order: what every shape renders from. */
export interface PreparedReport {
  /** The days that report anything. */
  readonly reported: readonly ReportedDay[];
  /** Cells over all reported days; a global cell index runs over them in day order. */
  readonly total: number;
  /** Per global cell index: which reported day it belongs to. */
  readonly dayOf: Uint16Array;
  /** Global index of each reported day's first cell. */
  readonly firstCell: readonly number[];
  readonly dimensions: readonly Dimension[];
  readonly coded: readonly CodedDimension[];
  /** Cell indexes sorted by their codes, lexicographic over the dimensions in request order. */
  readonly order: Uint32Array;
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

/** Codes and sorts the cells of the reported days for `dimensions`. */
export function prepareReport(
  model: TrafficModel,
  days: readonly ReportedDay[],
  dimensions: readonly Dimension[],
  keyOrder: KeyOrder,
): PreparedReport {
  const reported = days.filter((d) => d.num > 0);
  const cells = reported.map((d) => d.cells);
  const total = cells.reduce((s, c) => s + c.count, 0);
  const dayOf = new Uint16Array(total);
  const firstCell: number[] = [];
  let at = 0;
  reported.forEach((d, k) => {
    firstCell.push(at);
    dayOf.fill(k, at, at + d.cells.count);
    at += d.cells.count;
  });
  const coded = dimensions.map((dim) => codeDimension(dim, model, cells, total, keyOrder));
  return { reported, total, dayOf, firstCell, dimensions, coded, order: sortCells(coded, total) };
}

/**
 * Adds one cell's reported counters (each floored by its day's late-data fraction, so every
 * dimension set sums to the same totals) to `leaf` and `totals`.
 */
export function addCell(p: PreparedReport, cell: number, leaf: Float64Array, totals: Float64Array): void {
  const k = p.dayOf[cell] ?? 0;
  const day = p.reported[k]!;
  const base = (cell - (p.firstCell[k] ?? 0)) * COUNTER_COUNT;
  for (let c = 0; c < COUNTER_COUNT; c++) {
    const value =
      day.num === day.den
        ? day.cells.counters[base + c]!
        : Math.floor((day.cells.counters[base + c]! * day.num) / day.den);
    leaf[c]! += value;
    totals[c]! += value;
  }
}

/** The totals of a prepared report, summed ahead of the items (for a body that writes them first). */
export function sumTotals(p: PreparedReport): Float64Array {
  const totals = new Float64Array(COUNTER_COUNT);
  const scratch = new Float64Array(COUNTER_COUNT);
  for (let cell = 0; cell < p.total; cell++) addCell(p, cell, scratch, totals);
  return totals;
}

/** The index of the first dimension whose code differs between cells a and b (depth when none). */
export function firstDifference(coded: readonly CodedDimension[], a: number, b: number): number {
  for (let d = 0; d < coded.length; d++) if (coded[d]!.codes[a] !== coded[d]!.codes[b]) return d;
  return coded.length;
}
