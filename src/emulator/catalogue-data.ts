/** Fixed vocabularies of the seeded catalogue (kept apart so catalogue.ts stays about generation). */

/** 2025-01-01T00:00:00Z: seeded timestamps sit before it, so they never depend on the real clock. */
export const EPOCH = 1735689600;

export const DISPLAY_SIZES: readonly [number, number][] = [
  [300, 250],
  [728, 90],
  [160, 600],
  [320, 50],
  [300, 600],
  [970, 250],
];
export const VIDEO_SIZES: readonly [number, number][] = [
  [1920, 1080],
  [1280, 720],
  [640, 360],
];
/** Landing pages, two of them with characters that CSV, COPY and JSON writers must escape. */
export const LANDING_PAGES: readonly string[] = [
  'https://shop.example.com/sale?utm_source=adops',
  'https://brand.example.org/spring',
  'https://shop.example.com/sale?tags="spring",summer',
  "https://example.fr/l'offre-du-jour",
  'https://travel.example.net/deals/über',
  'https://app.example.io/install?ref=display&v=2',
];
export const NAME_WORDS: readonly string[] = [
  'Spring',
  'Summer "Sale"',
  'Brand, EU',
  "Kids' Toys",
  'Retargeting',
  'Ünïcode',
];
export const TARGET_WINDOWS: readonly string[] = ['_blank', '_top', '_self', '_parent'];
