import { adSizeOf, landingUrlOf } from '../entities.js';
import type { Catalogue } from '../catalogue.js';
import {
  BROWSERS,
  COUNTRIES,
  COUNTRY_LANGUAGES,
  countryWeight,
  DEVICES,
  LANGUAGES,
  LOCATIONS,
} from './geo.js';

/** One place traffic can come from: a country, one of its regions and one of its cities. */
export interface Location {
  readonly country: number;
  readonly region: string;
  readonly city: string;
}

/**
 * Lookup tables derived once from the seeded catalogue: which (creative, zone) pairs can carry
 * traffic, and per creative the values of the dimensions that follow from it.
 */
export interface TrafficModel {
  readonly catalogue: Catalogue;
  /** Creative index of each pair; a creative runs in every zone of its campaign. */
  readonly pairCreative: Uint16Array;
  readonly pairZone: Uint16Array;
  /** Campaign index of each creative. */
  readonly creativeCampaign: Uint16Array;
  /** Traffic multiplier per creative (from its campaign's weight), around 1. */
  readonly creativeWeight: Float64Array;
  readonly creativeAdSize: readonly string[];
  readonly creativeLanding: readonly string[];
  readonly locations: readonly Location[];
  /** Per country: first index into `locations` and how many follow. */
  readonly countryLocStart: Uint16Array;
  readonly countryLocCount: Uint16Array;
  /** Per country: language indexes (into LANGUAGES), most common first. */
  readonly countryLanguages: readonly (readonly number[])[];
  readonly countryWeight: Float64Array;
  /** Cumulative browser weights, normalised to end at 1. */
  readonly browserCumulative: Float64Array;
}

/** Builds the traffic model of a catalogue (pure; done once per emulator). */
export function buildTrafficModel(catalogue: Catalogue): TrafficModel {
  const zoneIndex = new Map(catalogue.zones.map((z, i) => [z.zone_id, i]));
  const campaignIndex = new Map(catalogue.campaigns.map((c, i) => [c.campaign_id, i]));
  const pc: number[] = [];
  const pz: number[] = [];
  const creativeCampaign = new Uint16Array(catalogue.creatives.length);
  const creativeWeight = new Float64Array(catalogue.creatives.length);
  catalogue.creatives.forEach((creative, ci) => {
    const c = campaignIndex.get(creative.campaign_id) ?? 0;
    const campaign = catalogue.campaigns[c];
    creativeCampaign[ci] = c;
    creativeWeight[ci] = 0.5 + (campaign?.weight ?? 50) / 66;
    for (const zoneId of campaign?.zone_ids ?? []) {
      const z = zoneIndex.get(zoneId);
      if (z === undefined) continue;
      pc.push(ci);
      pz.push(z);
    }
  });
  const locations: Location[] = [];
  const start = new Uint16Array(COUNTRIES.length);
  const count = new Uint16Array(COUNTRIES.length);
  const weights = new Float64Array(COUNTRIES.length);
  const languages: number[][] = [];
  COUNTRIES.forEach((country, k) => {
    start[k] = locations.length;
    for (const [region, cities] of LOCATIONS[country] ?? [['Unknown', ['Unknown']] as const])
      for (const city of cities) locations.push({ country: k, region, city });
    count[k] = locations.length - (start[k] ?? 0);
    weights[k] = countryWeight(country);
    languages.push((COUNTRY_LANGUAGES[country] ?? ['en']).map((l) => LANGUAGES.indexOf(l)));
  });
  const total = BROWSERS.reduce((s, [, w]) => s + w, 0);
  const browserCumulative = new Float64Array(BROWSERS.length);
  let acc = 0;
  BROWSERS.forEach(([, w], i) => {
    acc += w / total;
    browserCumulative[i] = acc;
  });
  browserCumulative[BROWSERS.length - 1] = 1;
  return {
    catalogue,
    pairCreative: Uint16Array.from(pc),
    pairZone: Uint16Array.from(pz),
    creativeCampaign,
    creativeWeight,
    creativeAdSize: catalogue.creatives.map(adSizeOf),
    creativeLanding: catalogue.creatives.map(landingUrlOf),
    locations,
    countryLocStart: start,
    countryLocCount: count,
    countryLanguages: languages,
    countryWeight: weights,
    browserCumulative,
  };
}

/** Number of distinct (creative, zone, country, device) combinations a day's cells are drawn from. */
export function combinationCount(model: TrafficModel): number {
  return model.pairCreative.length * COUNTRIES.length * DEVICES.length;
}
