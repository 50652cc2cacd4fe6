import type { SpecDimension as Dimension } from '../spec.js';
import { dayNumber, type DayCells } from './cells.js';
import { BROWSERS, COUNTRIES, DEVICES, LANGUAGES } from './geo.js';
import type { TrafficModel } from './traffic.js';

/**
 * One requested dimension over all cells of a request: a small integer code per cell, whose
 * order is the order of the keys in the response, and the JSON-encoded key of each code.
 */
export interface CodedDimension {
  readonly codes: Uint32Array;
  readonly keysJson: readonly string[];
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

type Source = 'creative' | 'zone' | 'location' | 'language' | 'device' | 'browser' | 'hour' | 'day';

/** Which per-cell column a dimension follows from, and the key text of each of its values. */
function describe(
  dim: Dimension,
  model: TrafficModel,
  days: readonly DayCells[],
): { source: Source; keys: string[] } {
  const { catalogue } = model;
  const campaignOf = (ci: number) => catalogue.campaigns[model.creativeCampaign[ci] ?? 0];
  const perCreative = (f: (ci: number) => string) => ({
    source: 'creative' as const,
    keys: catalogue.creatives.map((_, ci) => f(ci)),
  });
  switch (dim) {
    case 'campaign_id':
      return perCreative((ci) => String(campaignOf(ci)?.campaign_id));
    case 'creative_id':
      return perCreative((ci) => String(catalogue.creatives[ci]?.creative_id));
    case 'ad_format':
      return perCreative((ci) => String(campaignOf(ci)?.ad_format));
    case 'tier':
      return perCreative((ci) => String(campaignOf(ci)?.tier));
    case 'ad_size':
      return perCreative((ci) => model.creativeAdSize[ci] ?? '0x0');
    case 'landing_url':
      return perCreative((ci) => model.creativeLanding[ci] ?? '');
    case 'zone_id':
      return { source: 'zone', keys: catalogue.zones.map((z) => String(z.zone_id)) };
    case 'domain':
      return { source: 'zone', keys: catalogue.zones.map((z) => z.domain) };
    case 'country':
      return { source: 'location', keys: model.locations.map((l) => COUNTRIES[l.country] ?? '') };
    case 'region':
      return { source: 'location', keys: model.locations.map((l) => l.region) };
    case 'city':
      return { source: 'location', keys: model.locations.map((l) => l.city) };
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
      return { source: 'day', keys: days.map((d) => d.day.slice(0, 4)) };
    case 'month':
      return { source: 'day', keys: days.map((d) => d.day.slice(0, 7)) };
    case 'weekday':
      return { source: 'day', keys: days.map((d) => WEEKDAYS[(((dayNumber(d.day) + 4) % 7) + 7) % 7] ?? '') };
  }
}

/**
 * The order of a dimension's keys in the response: 'natural' sorts numbers numerically (ids, tiers,
 * hours) and everything else by code unit; 'code-unit' sorts all as text ("10" before "2"), as a
 * server that sorts its keys alphabetically does (the sortKeys quirk).
 */
export type KeyOrder = 'natural' | 'code-unit';

function compareNatural(a: string, b: string): number {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b) && a.length !== b.length) return a.length - b.length;
  return compareCodeUnits(a, b);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Codes one dimension for the concatenated cells of `days` (`total` = sum of their counts). */
export function codeDimension(
  dim: Dimension,
  model: TrafficModel,
  days: readonly DayCells[],
  total: number,
  order: KeyOrder = 'natural',
): CodedDimension {
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
  return { codes, keysJson: distinct.map((k) => JSON.stringify(k)) };
}
