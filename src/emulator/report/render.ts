// The GET /reports body: cached per-day cells, late-data scaled, grouped and written as JSON chunks.
import { FAITHFUL_QUIRKS, type Quirks } from '../options.js';
import type { Dimension, PreparedReport, ReportedDay } from './dimensions.js';
import {
  addCell,
  firstDifference,
  leafCount,
  prepareReport,
  SPEC_COUNTERS as COUNTERS,
  sumTotals,
} from './dimensions.js';
import type { DayCells, TrafficModel } from './traffic.js';
import { COUNTER_COUNT, daysBetween, generateDay, lateFraction } from './traffic.js';

const CHUNK = 64 * 1024;

export type ReportEncoding = Pick<
  Quirks,
  'stringValues' | 'sortKeys' | 'emptyAsArray' | 'totals' | 'reportShape'
>;

const PLAIN_PREFIXES = COUNTERS.map((name, i) => `${i === 0 ? '{' : ','}"${name}":`);
const QUOTED_PREFIXES = COUNTERS.map((name, i) => `${i === 0 ? '{' : '",'}"${name}":"`);

/** Writes five sums as `{"ad_requests":12,...}` (quoted under stringValues); chosen once per report. */
function counterWriter(e: ReportEncoding): (sums: Float64Array) => string {
  const [prefixes, end] = e.stringValues ? [QUOTED_PREFIXES, '"}'] : [PLAIN_PREFIXES, '}'];
  return (sums) => {
    let s = '';
    for (let k = 0; k < COUNTER_COUNT; k++) s += (prefixes[k] ?? '') + String(sums[k]);
    return s + end;
  };
}

function totalsMember(e: ReportEncoding, totals: Float64Array, empty: boolean): string {
  if (e.totals === 'missing') return '';
  if (e.totals === 'empty-array' || (empty && e.emptyAsArray)) return '"totals":[]';
  return `"totals":${counterWriter(e)(totals)}`;
}

/** The body in ~64 KB chunks, no object tree: sorted cells summed per leaf, braces opened while walking. */
function* renderReport(
  model: TrafficModel,
  days: readonly ReportedDay[],
  dimensions: readonly Dimension[],
  encoding: ReportEncoding,
  onRows?: (rows: number) => void,
): Generator<string> {
  const p = prepareReport(model, days, dimensions, encoding.sortKeys ? 'code-unit' : 'natural');
  onRows?.(leafCount(p));
  const empty = p.total === 0;
  // Totals first (sortKeys) need them before the walk: one cheap extra pass over the cells.
  const first = encoding.sortKeys ? totalsMember(encoding, sumTotals(p), empty) : '';
  const head = `{${first === '' ? '' : `${first},`}"items":`;
  const tail = (totals: Float64Array) => {
    const last = encoding.sortKeys ? '' : totalsMember(encoding, totals, empty);
    return `${last === '' ? '' : `,${last}`}}`;
  };
  if (empty) {
    const items = encoding.emptyAsArray || encoding.reportShape === 'rows' ? '[]' : '{}';
    yield head + items + tail(new Float64Array(COUNTER_COUNT));
  } else if (encoding.reportShape === 'rows') yield* renderRows(p, encoding, head, tail);
  else yield* renderNested(p, encoding, head, tail);
}

/** The sorted walk both shapes share: `close` writes the leaf ending at `prev` and closes levels down to `level`. */
function* walk(
  p: PreparedReport,
  leaf: Float64Array,
  start: string,
  open: (level: number, cell: number) => string,
  close: (prev: number, level: number) => string,
  end: (totals: Float64Array) => string,
): Generator<string> {
  const { coded, order, total } = p;
  const totals = new Float64Array(COUNTER_COUNT);
  let out = start;
  let prev = -1;
  for (let i = 0; i < total; i++) {
    const cell = order[i] ?? 0;
    const level = prev < 0 ? 0 : firstDifference(coded, prev, cell);
    if (prev < 0 || level !== coded.length) {
      if (prev >= 0) out += close(prev, level) + ',';
      leaf.fill(0);
      out += open(level, cell);
      if (out.length >= CHUNK) {
        yield out;
        out = '';
      }
    }
    addCell(p, cell, leaf, totals);
    prev = cell;
  }
  yield out + close(prev, 0) + end(totals);
}

function renderNested(
  p: PreparedReport,
  encoding: ReportEncoding,
  head: string,
  tail: (totals: Float64Array) => string,
): Generator<string> {
  const { coded } = p;
  const counters = counterWriter(encoding);
  const depth = coded.length;
  const leaf = new Float64Array(COUNTER_COUNT);
  const open = (level: number, cell: number) => {
    let s = '';
    for (let d = level; d < depth; d++)
      s += coded[d]!.keysJson[coded[d]!.codes[cell] ?? 0] + (d < depth - 1 ? ':{' : ':');
    return s;
  };
  const close = (_prev: number, level: number) => counters(leaf) + '}'.repeat(Math.max(0, depth - 1 - level));
  return walk(p, leaf, head + '{', open, close, (totals) => '}' + tail(totals));
}

/** Dimensions whose values the spec types as int: written as JSON numbers in a row (strings under stringValues). */
const INTEGER_DIMENSIONS: ReadonlySet<Dimension> = new Set(['campaign_id', 'creative_id', 'zone_id', 'tier']);

function renderRows(
  p: PreparedReport,
  encoding: ReportEncoding,
  head: string,
  tail: (totals: Float64Array) => string,
): Generator<string> {
  const { coded, dimensions } = p;
  const fields: ({ name: string; dim: number } | { name: string; counter: number })[] = [
    ...dimensions.map((name, dim) => ({ name, dim })),
    ...COUNTERS.map((name, counter) => ({ name, counter })),
  ];
  if (encoding.sortKeys) fields.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const values = coded.map((c) =>
    INTEGER_DIMENSIONS.has(c.dim) && !encoding.stringValues
      ? c.keysJson.map((k) => k.slice(1, -1))
      : c.keysJson,
  );
  const quote = encoding.stringValues ? '"' : '';
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
  const end = (totals: Float64Array) => ']' + tail(totals);
  return walk(p, leaf, head + '[', () => '', row, end);
}

export class ReportEngine {
  private readonly cache = new Map<string, DayCells>();
  private cached = 0;

  constructor(
    private readonly model: TrafficModel,
    private readonly options: {
      readonly seed: number;
      readonly cellsPerDay: number;
      readonly lateDataDays: number;
    },
  ) {}

  /** The final cells of a day; recent days from a cache of at least 4 million cells, least recently used out first. */
  private day(day: string): DayCells {
    const hit = this.cache.get(day);
    if (hit !== undefined) {
      // Re-insert so the Map's order is least recently used first.
      this.cache.delete(day);
      this.cache.set(day, hit);
      return hit;
    }
    const cells = generateDay(this.model, this.options.seed, day, this.options.cellsPerDay);
    const budget = Math.max(4_000_000, this.options.cellsPerDay);
    for (const [oldest, old] of this.cache) {
      if (this.cached + cells.count <= budget) break;
      this.cache.delete(oldest);
      this.cached -= old.count;
    }
    this.cache.set(day, cells);
    this.cached += cells.count;
    return cells;
  }

  render(
    from: string,
    until: string,
    dimensions: readonly Dimension[],
    today: string,
    encoding: ReportEncoding = FAITHFUL_QUIRKS,
    onRows?: (rows: number) => void, // told the rows (leaves) before the first chunk is made
  ): Generator<string> {
    const days = daysBetween(from, until).map((d) => {
      const { num, den } = lateFraction(d, today, this.options.lateDataDays);
      // A future day reports nothing: skip generating its cells at all.
      const cells = num === 0 ? generateDay(this.model, this.options.seed, d, 0) : this.day(d);
      return { cells, num, den };
    });
    return renderReport(this.model, days, dimensions, encoding, onRows);
  }
}
