import type { Quirks } from '../quirks.js';
import { SPEC_COUNTERS as COUNTERS } from '../spec.js';
import { COUNTER_COUNT } from './cells.js';

/** How a report body is written: the quirks that change its bytes, never its numbers. */
export interface ReportEncoding {
  /** Counters (and, in rows, numeric dimension values) as JSON strings. */
  readonly stringValues: boolean;
  /** Totals before items; dimension keys (and row fields) in plain code-unit order. */
  readonly sortKeys: boolean;
  /** An empty report's items and totals as []. */
  readonly emptyAsArray: boolean;
  readonly totals: Quirks['totals'];
  readonly shape: Quirks['reportShape'];
}

/** Today's encoding: nested items, numbers as numbers, items before totals. */
export const FAITHFUL_ENCODING: ReportEncoding = Object.freeze({
  stringValues: false,
  sortKeys: false,
  emptyAsArray: false,
  totals: 'normal',
  shape: 'nested',
});

/** The report encoding the quirks ask for. */
export function reportEncoding(q: Quirks): ReportEncoding {
  return {
    stringValues: q.stringValues,
    sortKeys: q.sortKeys,
    emptyAsArray: q.emptyAsArray,
    totals: q.totals,
    shape: q.reportShape,
  };
}

/** Writes five sums as a counters object: `{"ad_requests":12,...}`, or with strings `{"ad_requests":"12",...}`. */
export type CounterWriter = (sums: Float64Array) => string;

const PLAIN_PREFIXES = COUNTERS.map((name, i) => `${i === 0 ? '{' : ','}"${name}":`);
const QUOTED_PREFIXES = COUNTERS.map((name, i) => `${i === 0 ? '{' : '",'}"${name}":"`);

function plainCounters(sums: Float64Array): string {
  let s = '';
  for (let k = 0; k < COUNTER_COUNT; k++) s += (PLAIN_PREFIXES[k] ?? '') + String(sums[k]);
  return s + '}';
}

function quotedCounters(sums: Float64Array): string {
  let s = '';
  for (let k = 0; k < COUNTER_COUNT; k++) s += (QUOTED_PREFIXES[k] ?? '') + String(sums[k]);
  return s + '"}';
}

/** The counter writer of an encoding, chosen once per report so the per-leaf work has no branch. */
export function counterWriter(e: ReportEncoding): CounterWriter {
  return e.stringValues ? quotedCounters : plainCounters;
}

/** The `"totals":...` member, or '' when the quirk leaves totals out. */
export function totalsMember(e: ReportEncoding, totals: Float64Array, empty: boolean): string {
  if (e.totals === 'missing') return '';
  if (e.totals === 'empty-array' || (empty && e.emptyAsArray)) return '"totals":[]';
  return `"totals":${counterWriter(e)(totals)}`;
}
