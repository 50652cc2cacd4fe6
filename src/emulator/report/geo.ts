/**
 * Static vocabularies the traffic cells draw from. Large enough that the benchmark's dimension set
 * (day, campaign_id, creative_id, zone_id, country, device) has well over a million combinations, and
 * seasoned with text that tests escaping (apostrophes, commas, quotes, non-ASCII) but no control characters.
 */

/** ISO 3166-1 alpha-2 codes: the country dimension's values. */
export const COUNTRIES: readonly string[] = (
  'AD AE AF AG AL AM AO AR AT AU AZ BA BB BD BE BF BG BH BI BJ BN BO BR BS BT BW BY BZ CA CD CF CG CH ' +
  'CI CL CM CN CO CR CU CV CY CZ DE DJ DK DM DO DZ EC EE EG ER ES ET FI FJ FM FR GA GB GD GE GH GM GN GQ ' +
  'GR GT GW GY HK HN HR HT HU ID IE IL IN IQ IR IS IT JM JO JP KE KG KH KI KM KN KR KW KZ LA LB LC LI LK ' +
  'LR LS LT LU LV LY MA MC MD ME MG MH MK ML MM MN MO MR MT MU MV MW MX MY MZ NA NE NG NI NL NO NP NR NZ ' +
  'OM PA PE PG PH PK PL PR PS PT PW PY QA RO RS RU RW SA SB SC SD SE SG SI SK SL SM SN SO SR SS ST SV SY ' +
  'SZ TD TG TH TJ TL TM TN TO TR TT TV TW TZ UA UG US UY UZ VA VC VE VN VU WS YE ZA ZM ZW'
).split(' ');

/** Regions and cities of the best-known markets; other countries report region and city 'Unknown'. */
export const LOCATIONS: Readonly<Record<string, readonly (readonly [string, readonly string[]])[]>> = {
  US: [
    ['California', ['Los Angeles', 'San Francisco', 'San José']],
    ['New York', ['New York', 'Buffalo']],
    ['Idaho', ["Coeur d'Alene", 'Boise']],
    ['Texas', ['Austin', 'Houston']],
  ],
  GB: [
    ['England', ['London', 'Manchester']],
    ['Scotland', ['Edinburgh', 'Glasgow']],
  ],
  DE: [
    ['Bayern', ['München', 'Nürnberg']],
    ['Berlin', ['Berlin']],
  ],
  FR: [
    ['Île-de-France', ['Paris']],
    ["Provence-Alpes-Côte d'Azur", ['Marseille', 'Nice']],
  ],
  IT: [['Lombardia', ['Milano']]],
  ES: [['Cataluña', ['Barcelona', "L'Hospitalet de Llobregat"]]],
  NL: [['Noord-Holland', ['Amsterdam']]],
  CA: [['Québec', ['Montréal', 'Québec']]],
  BR: [['São Paulo', ['São Paulo']]],
  JP: [['Tokyo', ['Tokyo']]],
  IN: [['Maharashtra', ['Mumbai', 'Pune']]],
  AU: [['New South Wales', ['Sydney']]],
};

/** Languages spoken in a country, most common first; other countries fall back to English. */
export const COUNTRY_LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  US: ['en', 'es'],
  GB: ['en'],
  DE: ['de', 'en'],
  FR: ['fr'],
  IT: ['it'],
  ES: ['es', 'ca'],
  NL: ['nl', 'en'],
  CA: ['en', 'fr'],
  BR: ['pt'],
  JP: ['ja'],
  IN: ['hi', 'en'],
  AU: ['en'],
  CH: ['de', 'fr', 'it'],
  BE: ['nl', 'fr'],
  MX: ['es'],
  AR: ['es'],
  PT: ['pt'],
  PL: ['pl'],
  RU: ['ru'],
  CN: ['zh'],
  KR: ['ko'],
  TR: ['tr'],
  SE: ['sv'],
  NO: ['no'],
  DK: ['da'],
  FI: ['fi'],
};

/** Every language the cells may carry (sorted, unique). */
export const LANGUAGES: readonly string[] = [
  ...new Set(['en', ...Object.values(COUNTRY_LANGUAGES).flat()]),
].sort();

/** The device dimension's values, as the spec's targeting names them. */
export const DEVICES: readonly string[] = ['desktop', 'mobile', 'tablet'];

/** Browser names with their relative weights. */
export const BROWSERS: readonly (readonly [string, number])[] = [
  ['Chrome', 50],
  ['Safari', 20],
  ['Edge', 8],
  ['Firefox', 7],
  ['Samsung Internet', 6],
  ['Opera', 3],
  ['Other', 6],
];

/** Publisher domains; each zone belongs to one. */
export const DOMAINS: readonly string[] = [
  'news.example.com',
  'sports.example.com',
  'weather.example.org',
  'recipes.example.net',
  'games.example.io',
  'travel.example.co.uk',
  'tech.example.de',
  'finance.example.fr',
  'auto.example.it',
  'music.example.es',
  'video.example.com',
  'forum.example.net',
  'blog.example.org',
  'shop.example.com',
  'mail.example.com',
  'xn--bcher-kva.example',
];

/** A few markets carry most of the traffic: relative traffic weight by country. */
export function countryWeight(country: string): number {
  const big: Record<string, number> = { US: 40, GB: 12, DE: 12, FR: 10, JP: 8, CA: 6, IT: 6, ES: 6, BR: 5 };
  return big[country] ?? 1;
}
