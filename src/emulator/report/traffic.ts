// Report traffic: a catalogue model, each day's cells from (seed, day) alone, late data, and vocabularies.
import type { Catalogue } from '../catalogue.js';
import { createRng, mixSeed } from '../prng.js';

export type TrafficModel = ReturnType<typeof buildTrafficModel>;

export function buildTrafficModel(catalogue: Catalogue) {
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
  // Each place traffic can come from: a country, one of its regions and one of its cities.
  const locations: { country: number; region: string; city: string }[] = [];
  const start = new Uint16Array(COUNTRIES.length);
  const count = new Uint16Array(COUNTRIES.length);
  const weights = new Float64Array(COUNTRIES.length);
  const languages: number[][] = [];
  COUNTRIES.forEach((country, k) => {
    start[k] = locations.length;
    for (const [region, cities] of Object.entries(LOCATIONS[country] ?? { Unknown: ['Unknown'] }))
      for (const city of cities) locations.push({ country: k, region, city });
    count[k] = locations.length - (start[k] ?? 0);
    weights[k] = Number(BIG_MARKETS[country]?.[0] ?? 1);
    languages.push((COUNTRY_LANGUAGES[country] ?? ['en']).map((l) => LANGUAGES.indexOf(l)));
  });
  // Each campaign's flight in days (open: unbounded) and its impressions a day (0: as the cells fall).
  const flightFrom = Float64Array.from(catalogue.campaigns, (c) => (c.delivery.start || -Infinity) / 86400);
  const flightTo = Float64Array.from(catalogue.campaigns, (c) => (c.delivery.end || Infinity) / 86400);
  const daily = Float64Array.from(catalogue.campaigns, (c) => catalogue.daily.get(c.campaign_id) ?? 0);
  const total = BROWSERS.reduce((s, [, w]) => s + w, 0);
  let acc = 0;
  const browserCumulative = Float64Array.from(BROWSERS, ([, w]) => (acc += w / total));
  browserCumulative[BROWSERS.length - 1] = 1;
  return {
    catalogue,
    pairCreative: Uint16Array.from(pc),
    pairZone: Uint16Array.from(pz),
    creativeCampaign,
    creativeWeight,
    locations,
    countryLocStart: start,
    countryLocCount: count,
    countryLanguages: languages,
    countryWeight: weights,
    browserCumulative,
    flightFrom,
    flightTo,
    daily,
  };
}

export const COUNTER_COUNT = 5;

/** One day's traffic, column-wise (typed arrays: a million cells in ~30 MB, fast to group). */
export type DayCells = ReturnType<typeof generateDay>;

export function dayNumber(day: string): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / 86_400_000);
}

/** A day's final cells from (seed, day) alone, distinct: i walks an affine permutation of combinations. */
export function generateDay(model: TrafficModel, seed: number, day: string, count: number) {
  const n = dayNumber(day);
  const rng = createRng(mixSeed(seed, n, 0xce11));
  // Only the pairs of campaigns in flight that day: a campaign has no traffic outside its flight.
  const flying = (ci: number) => {
    const c = model.creativeCampaign[ci] ?? 0;
    return (model.flightFrom[c] ?? 0) < n + 1 && (model.flightTo[c] ?? 0) > n;
  };
  const pairs = Uint32Array.from(model.pairCreative.keys()).filter((p) => flying(model.pairCreative[p] ?? 0));
  const space = pairs.length * COUNTRIES.length * DEVICES.length;
  const devices = DEVICES.length;
  const countries = COUNTRIES.length;
  const cells = {
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
    const pair = pairs[Math.floor(rest / countries)] ?? 0;
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
  scaleToDaily(model, cells);
  return cells;
}

/** Scales each cell of a campaign with impressions a day so that the day's sum meets them: every counter by one
 * factor, rounded down, so impressions <= filled <= requests and the rest still hold. */
function scaleToDaily(model: TrafficModel, cells: DayCells): void {
  const sums = new Float64Array(model.daily.length);
  const campaignOf = (i: number) => model.creativeCampaign[cells.creative[i] ?? 0] ?? 0;
  for (let i = 0; i < cells.count; i++) sums[campaignOf(i)]! += cells.counters[i * COUNTER_COUNT + 2] ?? 0;
  for (let i = 0; i < cells.count; i++) {
    const c = campaignOf(i);
    const k = (model.daily[c] ?? 0) / (sums[c] ?? 0);
    if (!(k > 0 && Number.isFinite(k))) continue;
    for (let j = i * COUNTER_COUNT; j < (i + 1) * COUNTER_COUNT; j++)
      cells.counters[j] = Math.min(999_999, Math.floor((cells.counters[j] ?? 0) * k));
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** A day's reported share (docs/emulator.md, Late data): 0 ahead, (age+1)/(N+1) in the window, then all. */
export function lateFraction(day: string, today: string, windowDays: number): { num: number; den: number } {
  const age = dayNumber(today) - dayNumber(day);
  if (age < 0) return { num: 0, den: 1 };
  if (age >= windowDays) return { num: 1, den: 1 };
  return { num: age + 1, den: windowDays + 1 };
}

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export function daysBetween(from: string, until: string): string[] {
  const out: string[] = [];
  const end = dayNumber(until);
  for (let d = dayNumber(from); d <= end; d++) out.push(new Date(d * 86_400_000).toISOString().slice(0, 10));
  return out;
}

// Vocabularies big enough for a million-combination benchmark, with quotes, commas and non-ASCII to escape.

export const COUNTRIES: readonly string[] = (
  'AD AE AF AG AL AM AO AR AT AU AZ BA BB BD BE BF BG BH BI BJ BN BO BR BS BT BW BY BZ CA CD CF CG CH ' +
  'CI CL CM CN CO CR CU CV CY CZ DE DJ DK DM DO DZ EC EE EG ER ES ET FI FJ FM FR GA GB GD GE GH GM GN GQ ' +
  'GR GT GW GY HK HN HR HT HU ID IE IL IN IQ IR IS IT JM JO JP KE KG KH KI KM KN KR KW KZ LA LB LC LI LK ' +
  'LR LS LT LU LV LY MA MC MD ME MG MH MK ML MM MN MO MR MT MU MV MW MX MY MZ NA NE NG NI NL NO NP NR NZ ' +
  'OM PA PE PG PH PK PL PR PS PT PW PY QA RO RS RU RW SA SB SC SD SE SG SI SK SL SM SN SO SR SS ST SV SY ' +
  'SZ TD TG TH TJ TL TM TN TO TR TT TV TW TZ UA UG US UY UZ VA VC VE VN VU WS YE ZA ZM ZW'
).split(' ');

function listsOf(text: string, sep = ' '): Record<string, string[]> {
  return Object.fromEntries(
    text.split(sep).map((e) => [e.split(':')[0], (e.split(':')[1] ?? '').split(',')]),
  );
}

const LOCATIONS: Readonly<Record<string, Record<string, string[]>>> = {
  US: listsOf(
    "California:Los Angeles,San Francisco,San José|New York:New York,Buffalo|Idaho:Coeur d'Alene,Boise|Texas:Austin,Houston",
    '|',
  ),
  GB: listsOf('England:London,Manchester|Scotland:Edinburgh,Glasgow', '|'),
  DE: listsOf('Bayern:München,Nürnberg|Berlin:Berlin', '|'),
  FR: listsOf("Île-de-France:Paris|Provence-Alpes-Côte d'Azur:Marseille,Nice", '|'),
  IT: listsOf('Lombardia:Milano', '|'),
  ES: listsOf("Cataluña:Barcelona,L'Hospitalet de Llobregat", '|'),
  NL: listsOf('Noord-Holland:Amsterdam', '|'),
  CA: listsOf('Québec:Montréal,Québec', '|'),
  BR: listsOf('São Paulo:São Paulo', '|'),
  JP: listsOf('Tokyo:Tokyo', '|'),
  IN: listsOf('Maharashtra:Mumbai,Pune', '|'),
  AU: listsOf('New South Wales:Sydney', '|'),
};

const COUNTRY_LANGUAGES = listsOf(
  'US:en,es GB:en DE:de,en FR:fr IT:it ES:es,ca NL:nl,en CA:en,fr BR:pt JP:ja IN:hi,en AU:en CH:de,fr,it ' +
    'BE:nl,fr MX:es AR:es PT:pt PL:pl RU:ru CN:zh KR:ko TR:tr SE:sv NO:no DK:da FI:fi',
);

export const LANGUAGES: readonly string[] = [
  ...new Set(['en', ...Object.values(COUNTRY_LANGUAGES).flat()]),
].sort();

export const DEVICES: readonly string[] = ['desktop', 'mobile', 'tablet'];

export const BROWSERS = Object.entries(
  listsOf('Chrome:50|Safari:20|Edge:8|Firefox:7|Samsung Internet:6|Opera:3|Other:6', '|'),
).map(([name, [weight]]) => [name, Number(weight)] as const);

const BIG_MARKETS = listsOf('US:40 GB:12 DE:12 FR:10 JP:8 CA:6 IT:6 ES:6 BR:5');
