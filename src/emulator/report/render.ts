import type { SpecDimension as Dimension } from '../spec.js';
import { COUNTER_COUNT } from './cells.js';
import { counterWriter, FAITHFUL_ENCODING, totalsMember, type ReportEncoding } from './encoding.js';
import {
  addCell,
  firstDifference,
  prepareReport,
  sumTotals,
  type PreparedReport,
  type ReportedDay,
} from './prepare.js';
import { renderRows } from './render-rows.js';
import type { TrafficModel } from './traffic.js';

export type { ReportedDay } from './prepare.js';

const CHUNK = 64 * 1024;

/**
 * Renders the report body `{"items":{...},"totals":{...}}` as a sequence of string chunks of about
 * 64 KB, without building an object tree: cells are sorted by their dimension codes, equal leaves
 * are summed, and nesting braces are opened and closed as the sorted walk moves. The encoding
 * (quirks) changes only the bytes: string counters, totals first or left out, [] when empty, rows.
 */
export function* renderReport(
  model: TrafficModel,
  days: readonly ReportedDay[],
  dimensions: readonly Dimension[],
  encoding: ReportEncoding = FAITHFUL_ENCODING,
): Generator<string> {
  const p = prepareReport(model, days, dimensions, encoding.sortKeys ? 'code-unit' : 'natural');
  const empty = p.total === 0;
  // Totals first (sortKeys) need them before the walk: one cheap extra pass over the cells.
  const head = encoding.sortKeys
    ? `{${withComma(totalsMember(encoding, sumTotals(p), empty))}"items":`
    : '{"items":';
  const tail = (totals: Float64Array) =>
    encoding.sortKeys ? '}' : `${commaBefore(totalsMember(encoding, totals, empty))}}`;
  if (empty) {
    yield (
      head +
      (encoding.emptyAsArray || encoding.shape === 'rows' ? '[]' : '{}') +
      tail(new Float64Array(COUNTER_COUNT))
    );
    return;
  }
  if (encoding.shape === 'rows') yield* renderRows(p, encoding, head, tail);
  else yield* renderNested(p, encoding, head, tail);
}

function withComma(member: string): string {
  return member === '' ? '' : `${member},`;
}

function commaBefore(member: string): string {
  return member === '' ? '' : `,${member}`;
}

/** The nested walk: one object level per dimension, in request order. */
function* renderNested(
  p: PreparedReport,
  encoding: ReportEncoding,
  head: string,
  tail: (totals: Float64Array) => string,
): Generator<string> {
  const { coded, order, total } = p;
  const counters = counterWriter(encoding);
  const depth = coded.length;
  const totals = new Float64Array(COUNTER_COUNT);
  const leaf = new Float64Array(COUNTER_COUNT);
  let out = head + '{';
  let prev = -1;
  const openFrom = (level: number, cell: number) => {
    for (let d = level; d < depth; d++) {
      out += coded[d]!.keysJson[coded[d]!.codes[cell] ?? 0] + (d < depth - 1 ? ':{' : ':');
    }
  };
  for (let i = 0; i < total; i++) {
    const cell = order[i] ?? 0;
    const level = prev < 0 ? -1 : firstDifference(coded, prev, cell);
    if (level !== depth) {
      if (prev >= 0) {
        out += counters(leaf);
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
    addCell(p, cell, leaf, totals);
    prev = cell;
  }
  out += counters(leaf);
  for (let d = depth - 2; d >= 0; d--) out += '}';
  out += '}' + tail(totals);
  yield out;
}
