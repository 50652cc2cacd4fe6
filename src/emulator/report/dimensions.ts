// The spec's dimensions and counters, and a request's cells coded and sorted into leaf order.
import type { DayCells, TrafficModel } from './traffic.js';
import { BROWSERS, COUNTER_COUNT, COUNTRIES, dayNumber, DEVICES, LANGUAGES } from './traffic.js';
import { adSizeOf, landingUrlOf, type Creative } from '../catalogue.js';
import { isOneOf } from '../options.js';

// Copied from the spec, not shared with the client, so a client bug is exposed, not shared; a test compares.

export const SPEC_DIMENSIONS = [
  ...(['year', 'month', 'day', 'hour', 'weekday'] as const),
  ...(['campaign_id', 'creative_id', 'zone_id', 'ad_format', 'ad_size', 'landing_url', 'tier'] as const),
  ...(['country', 'region', 'city', 'language', 'domain', 'device', 'browser'] as const),
] as const;

export type Dimension = (typeof SPEC_DIMENSIONS)[number];

export function isSpecDimension(name: string): name is Dimension {
  return isOneOf(SPEC_DIMENSIONS, name);
}

/** The spec's report counters, in the order the emulator writes them in every leaf and in totals. */
export const SPEC_COUNTERS = [
  'ad_requests',
  'filled_impressions',
  'impressions',
  'measurable_impressions',
  'viewable_impressions',
] as const;

type CodedDimension = ReturnType<typeof codeDimension>;

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

type Source = 'creative' | 'zone' | 'location' | 'language' | 'device' | 'browser' | 'hour' | 'day';

function describe(
  dim: Dimension,
  model: TrafficModel,
  days: readonly DayCells[],
): { source: Source; keys: string[] } {
  const { catalogue } = model;
  const perCreative = (f: (c: Creative, ci: number) => string) => ({
    source: 'creative' as const,
    keys: catalogue.creatives.map(f),
  });
  switch (dim) {
    case 'campaign_id':
    case 'ad_format':
    case 'tier':
      return perCreative((_, ci) => String(catalogue.campaigns[model.creativeCampaign[ci] ?? 0]?.[dim]));
    case 'creative_id':
      return perCreative((c) => String(c.creative_id));
    case 'ad_size':
      return perCreative(adSizeOf);
    case 'landing_url':
      return perCreative(landingUrlOf);
    case 'zone_id':
    case 'domain':
      return { source: 'zone', keys: catalogue.zones.map((z) => String(z[dim])) };
    case 'country':
    case 'region':
    case 'city':
      return {
        source: 'location',
        keys: model.locations.map((l) => (dim === 'country' ? (COUNTRIES[l.country] ?? '') : l[dim])),
      };
    case 'language':
      return { source: 'language', keys: [...LANGUAGES] };
    case 'device':
      return { source: 'device', keys: [...DEVICES] };
    case 'browser':
      return { source: 'browser', keys: BROWSERS.map(([name]) => name) };
    case 'hour':
      return { source: 'hour', keys: Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0')) };
    case 'day':
      return { source: 'day', keys: days.map((d) => d.day) };
    case 'year':
    case 'month':
      return { source: 'day', keys: days.map((d) => d.day.slice(0, dim === 'year' ? 4 : 7)) };
    case 'weekday':
      return { source: 'day', keys: days.map((d) => WEEKDAYS[(((dayNumber(d.day) + 4) % 7) + 7) % 7] ?? '') };
  }
}

/** Key order: 'natural' sorts numbers numerically, 'code-unit' all as text ("10" before "2"; sortKeys). */
type KeyOrder = 'natural' | 'code-unit';

function compareNatural(a: string, b: string): number {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b) && a.length !== b.length) return a.length - b.length;
  return compareCodeUnits(a, b);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function codeDimension(
  dim: Dimension,
  model: TrafficModel,
  days: readonly DayCells[],
  total: number,
  order: KeyOrder,
) {
  const { source, keys } = describe(dim, model, days);
  const distinct = [...new Set(keys)].sort(order === 'natural' ? compareNatural : compareCodeUnits);
  const codeOfKey = new Map(distinct.map((k, i) => [k, i]));
  const lookup = Uint32Array.from(keys, (k) => codeOfKey.get(k) ?? 0);
  const codes = new Uint32Array(total);
  let at = 0;
  days.forEach((cells, dayIndex) => {
    if (source === 'day') {
      codes.fill(lookup[dayIndex] ?? 0, at, at + cells.count);
    } else {
      const column = cells[source];
      for (let i = 0; i < cells.count; i++) codes[at + i] = lookup[column[i] ?? 0] ?? 0;
    }
    at += cells.count;
  });
  return { dim, codes, keysJson: distinct.map((k) => JSON.stringify(k)) };
}

export interface ReportedDay {
  readonly cells: DayCells;
  readonly num: number;
  readonly den: number;
}

export type PreparedReport = ReturnType<typeof prepareReport>;

/** Cell indexes sorted by their codes in request order: LSD radix, O(cells x dimensions). */
function sortCells(coded: readonly CodedDimension[], total: number): Uint32Array {
  let order = new Uint32Array(total);
  for (let i = 0; i < total; i++) order[i] = i;
  let next = new Uint32Array(total);
  for (const { codes, keysJson } of [...coded].reverse()) {
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

export function prepareReport(
  model: TrafficModel,
  days: readonly ReportedDay[],
  dimensions: readonly Dimension[],
  keyOrder: KeyOrder,
) {
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

/** Adds a cell's counters, floored by its day's late-data fraction (so any dimension set has the same totals). */
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

export function sumTotals(p: PreparedReport): Float64Array {
  const totals = new Float64Array(COUNTER_COUNT);
  const scratch = new Float64Array(COUNTER_COUNT);
  for (let cell = 0; cell < p.total; cell++) addCell(p, cell, scratch, totals);
  return totals;
}

export function firstDifference(coded: readonly CodedDimension[], a: number, b: number): number {
  for (let d = 0; d < coded.length; d++) if (coded[d]!.codes[a] !== coded[d]!.codes[b]) return d;
  return coded.length;
}

/** The leaves (rows) of a prepared report: cells sorted together with equal codes make one. */
export function leafCount(p: PreparedReport): number {
  let n = 0;
  for (let i = 0; i < p.total; i++)
    if (i === 0 || firstDifference(p.coded, p.order[i - 1] ?? 0, p.order[i] ?? 0) !== p.coded.length) n++;
  return n;
}
