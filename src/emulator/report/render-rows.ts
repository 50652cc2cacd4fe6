import { SPEC_COUNTERS as COUNTERS, type SpecDimension as Dimension } from '../spec.js';
import { COUNTER_COUNT } from './cells.js';
import type { ReportEncoding } from './encoding.js';
import { addCell, firstDifference, type PreparedReport } from './prepare.js';

const CHUNK = 64 * 1024;

/** Dimensions whose values the spec types as int: written as JSON numbers in a row (strings under stringValues). */
const INTEGER_DIMENSIONS: ReadonlySet<Dimension> = new Set(['campaign_id', 'creative_id', 'zone_id', 'tier']);

/** One member of a row, in the order it is written: a dimension (by index) or a counter (by index). */
type Field =
  { readonly name: string; readonly dim: number } | { readonly name: string; readonly counter: number };

/**
 * The rows shape: `items` is an array of flat rows, one per leaf, each with every requested
 * dimension and the five counters (`{"day":"2025-06-01","campaign_id":123,"ad_requests":5,...}`).
 * Fields follow request order then the counters, or code-unit order under sortKeys.
 */
export function* renderRows(
  p: PreparedReport,
  encoding: ReportEncoding,
  head: string,
  tail: (totals: Float64Array) => string,
): Generator<string> {
  const { coded, order, total } = p;
  const names = p.dimensions;
  const fields: Field[] = [
    ...names.map((name, dim) => ({ name, dim })),
    ...COUNTERS.map((name, counter) => ({ name, counter })),
  ];
  if (encoding.sortKeys) fields.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Per dimension, each key's value as written in a row: numbers bare unless stringValues.
  const values = coded.map((c, d) =>
    INTEGER_DIMENSIONS.has(names[d] as Dimension) && !encoding.stringValues
      ? c.keysJson.map((k) => k.slice(1, -1))
      : c.keysJson,
  );
  const quote = encoding.stringValues ? '"' : '';
  const depth = coded.length;
  const totals = new Float64Array(COUNTER_COUNT);
  const leaf = new Float64Array(COUNTER_COUNT);
  const row = (cell: number): string => {
    let s = '{';
    fields.forEach((f, i) => {
      s += `${i === 0 ? '' : ','}"${f.name}":`;
      s +=
        'dim' in f ? values[f.dim]![coded[f.dim]!.codes[cell] ?? 0] : quote + String(leaf[f.counter]) + quote;
    });
    return s + '}';
  };
  let out = head + '[';
  let prev = -1;
  for (let i = 0; i < total; i++) {
    const cell = order[i] ?? 0;
    if (prev >= 0 && firstDifference(coded, prev, cell) !== depth) {
      out += row(prev) + ',';
      leaf.fill(0);
      if (out.length >= CHUNK) {
        yield out;
        out = '';
      }
    }
    addCell(p, cell, leaf, totals);
    prev = cell;
  }
  out += row(prev) + ']' + tail(totals);
  yield out;
}
