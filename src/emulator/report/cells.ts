import { COUNTRIES, DEVICES } from './geo.js';
import { createRng, mixSeed } from '../prng.js';
import { combinationCount, type TrafficModel } from './traffic.js';

/** Number of counters per cell, in COUNTERS order. */
export const COUNTER_COUNT = 5;

/**
 * One day's final traffic, column-wise (typed arrays keep a million cells at ~30 MB and fast to group).
 * Cell i has creative[i], zone[i], location[i] ... and counters[5i .. 5i+4] in COUNTERS order.
 */
export interface DayCells {
  readonly day: string;
  readonly count: number;
  readonly creative: Uint16Array;
  readonly zone: Uint16Array;
  readonly location: Uint16Array;
  readonly language: Uint8Array;
  readonly device: Uint8Array;
  readonly browser: Uint8Array;
  readonly hour: Uint8Array;
  readonly counters: Uint32Array;
}

/** Days since 1970-01-01 of a YYYY-MM-DD date. */
export function dayNumber(day: string): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / 86_400_000);
}

/**
 * Generates the final (fully reported) cells of one day from (seed, day) alone, so any request
 * order gives the same cells. Up to the model's combination count, cells are distinct in
 * (creative, zone, country, device): index i walks an affine permutation of the combination space.
 */
export function generateDay(model: TrafficModel, seed: number, day: string, count: number): DayCells {
  const rng = createRng(mixSeed(seed, dayNumber(day), 0xce11));
  const space = combinationCount(model);
  const devices = DEVICES.length;
  const countries = COUNTRIES.length;
  const cells: DayCells = {
    day,
    count: space === 0 ? 0 : count,
    creative: new Uint16Array(count),
    zone: new Uint16Array(count),
    location: new Uint16Array(count),
    language: new Uint8Array(count),
    device: new Uint8Array(count),
    browser: new Uint8Array(count),
    hour: new Uint8Array(count),
    counters: new Uint32Array(count * COUNTER_COUNT),
  };
  if (space === 0) return cells;
  let stride = 1 + Math.floor(rng.next() * (space - 1));
  while (gcd(stride, space) !== 1) stride = (stride % (space - 1)) + 1;
  const offset = Math.floor(rng.next() * space);
  const browsers = model.browserCumulative;
  for (let i = 0; i < count; i++) {
    const combo = ((i % space) * stride + offset) % space;
    const device = combo % devices;
    const rest = Math.floor(combo / devices);
    const country = rest % countries;
    const pair = Math.floor(rest / countries);
    const creative = model.pairCreative[pair] ?? 0;
    cells.creative[i] = creative;
    cells.zone[i] = model.pairZone[pair] ?? 0;
    cells.device[i] = device;
    cells.location[i] =
      (model.countryLocStart[country] ?? 0) + Math.floor(rng.next() * (model.countryLocCount[country] ?? 1));
    const langs = model.countryLanguages[country] ?? [0];
    cells.language[i] = langs[Math.floor(rng.next() * langs.length)] ?? 0;
    const b = rng.next();
    let bi = 0;
    while (bi < browsers.length - 1 && b >= (browsers[bi] ?? 1)) bi++;
    cells.browser[i] = bi;
    cells.hour[i] = Math.floor(rng.next() * 24);
    // Heavy-tailed volume, scaled by market and campaign weight; stays below 10^6 per cell.
    const base = 1 + Math.floor(Math.exp(rng.next() * 9));
    const requests = Math.min(
      999_999,
      Math.floor(base * (model.countryWeight[country] ?? 1) * (model.creativeWeight[creative] ?? 1)),
    );
    const filled = Math.floor(requests * (0.5 + 0.5 * rng.next()));
    const impressions = Math.floor(filled * (0.9 + 0.1 * rng.next()));
    const measurable = Math.floor(impressions * (0.6 + 0.4 * rng.next()));
    const viewable = Math.floor(measurable * (0.3 + 0.6 * rng.next()));
    const o = i * COUNTER_COUNT;
    cells.counters[o] = requests;
    cells.counters[o + 1] = filled;
    cells.counters[o + 2] = impressions;
    cells.counters[o + 3] = measurable;
    cells.counters[o + 4] = viewable;
  }
  return cells;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
