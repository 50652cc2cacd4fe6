import {
  addCell,
  firstDifference,
  type PreparedReport,
  prepareReport,
  type ReportedDay,
  SPEC_COUNTERS as COUNTERS,
  type Dimension,
  sumTotals,
} from './dimensions.js';
import {
  COUNTER_COUNT,
  type DayCells,
  daysBetween,
  generateDay,
  lateFraction,
  type TrafficModel,
} from './traffic.js';
import type { Quirks } from '../options.js';

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

export interface ReportEngineOptions {
  readonly seed: number;
  readonly cellsPerDay: number;
  readonly lateDataDays: number;
  /** Cells kept in the day cache; older days are regenerated (deterministically) when asked again. */
  readonly cacheCells?: number;
}

/** Serves report bodies: per-day cells from (seed, day), cached, then late-data scaled and grouped. */
export class ReportEngine {
  private readonly cache = new Map<string, DayCells>();
  private cached = 0;

  constructor(
    private readonly model: TrafficModel,
    private readonly options: ReportEngineOptions,
  ) {}

  /** The final cells of a day (from the cache when recent). */
  day(day: string): DayCells {
    const hit = this.cache.get(day);
    if (hit !== undefined) {
      // Re-insert so the Map's order is least recently used first.
      this.cache.delete(day);
      this.cache.set(day, hit);
      return hit;
    }
    const cells = generateDay(this.model, this.options.seed, day, this.options.cellsPerDay);
    const budget = this.options.cacheCells ?? Math.max(4_000_000, this.options.cellsPerDay);
    while (this.cached + cells.count > budget && this.cache.size > 0) {
      const [oldest, old] = this.cache.entries().next().value as [string, DayCells];
      this.cache.delete(oldest);
      this.cached -= old.count;
    }
    this.cache.set(day, cells);
    this.cached += cells.count;
    return cells;
  }

  /** Every day of the range with the share of its traffic reported as of `today`. */
  reportedDays(from: string, until: string, today: string): ReportedDay[] {
    return daysBetween(from, until).map((d) => {
      const { num, den } = lateFraction(d, today, this.options.lateDataDays);
      // A future day reports nothing: skip generating its cells at all.
      const cells = num === 0 ? generateDay(this.model, this.options.seed, d, 0) : this.day(d);
      return { cells, num, den };
    });
  }

  /** The response body of GET /reports as string chunks, written in `encoding` (the quirks). */
  render(
    from: string,
    until: string,
    dimensions: readonly Dimension[],
    today: string,
    encoding: ReportEncoding = FAITHFUL_ENCODING,
  ): Generator<string> {
    return renderReport(this.model, this.reportedDays(from, until, today), dimensions, encoding);
  }
}
