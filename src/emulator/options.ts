// The emulator's options, and one set of schemas validating quirks and faults from every source.
import { z } from 'zod';
import type { CatalogueSize } from './catalogue.js';

const SCOPES = ['campaigns', 'creatives', 'reports'] as const;
export type Scope = (typeof SCOPES)[number];

export const KEY_SCHEMA = z.object({
  key: z.string().min(1),
  scopes: z.array(z.enum(SCOPES)).optional(),
  methods: z.array(z.string().regex(/^[A-Za-z]+$/)).optional(),
  /** Compared after stripping an IPv4-mapped ::ffff: prefix. */
  ips: z.array(z.string().min(1)).optional(),
  /** Stamped into account_id_created/account_id_modified by this key's writes. */
  accountId: z.number().int().positive().optional(),
});
export type EmulatorKey = z.input<typeof KEY_SCHEMA>;

/** Each fault rate and its fault: bands of one uniform draw, in this order, so together at most 1. */
export const FAULT_BANDS = [
  ['dropRate', 'drop'],
  ['failRate', 'fail'],
  ['rateLimitRate', 'rate_limit'],
  ['malformedRate', 'malformed'],
  ['truncateRate', 'truncate'],
  ['rateLimitStormRate', 'storm'],
  ['dropMidBodyRate', 'drop_mid_body'],
  ['dripRate', 'drip'],
] as const;
export const FAULT_RATES = FAULT_BANDS.map(([rate]) => rate);

const rate = z.number().min(0).max(1).optional();
/** Added latency: at most an hour, well inside what a Node timer holds. */
const latency = z.number().min(0).max(3_600_000, 'at most 3600000 ms (an hour)');

export const FAULT_OPTIONS_SCHEMA = z
  .strictObject({
    dropRate: rate,
    failRate: rate,
    rateLimitRate: rate,
    malformedRate: rate,
    truncateRate: rate,
    rateLimitStormRate: rate,
    dropMidBodyRate: rate,
    dripRate: rate,
    retryAfterSeconds: z.number().int().min(0).optional(),
    latencyMs: z.union([latency, z.tuple([latency, latency])]).optional(),
    paths: z.array(z.string()).optional(),
    seed: z.number().int().optional(),
    rateLimitStormLength: z.number().int().min(1).max(10_000).optional(),
    htmlShare: rate,
    dripIntervalMs: z.number().int().min(1).max(600_000).optional(),
  })
  .refine(
    (f) => FAULT_RATES.reduce((s, k) => s + (f[k] ?? 0), 0) <= 1,
    'the fault rates must add up to at most 1',
  );

export type FaultOptions = z.input<typeof FAULT_OPTIONS_SCHEMA>;

export const ECHO_PLACES = ['body', 'error', 'html', 'header'] as const;
export type EchoPlace = (typeof ECHO_PLACES)[number];

export const ECHO_FORMS = [
  'json',
  'json-slash',
  'percent',
  'percent-lower',
  'unicode',
  'unicode-lower',
  'mixed',
] as const;
export type EchoForm = (typeof ECHO_FORMS)[number];

export const REPORT_PARAMS_FORMS = ['any', 'repeat', 'brackets', 'comma', 'json-body'] as const;
export type ReportParamsForm = (typeof REPORT_PARAMS_FORMS)[number];

/** The choices the spec leaves open (docs/emulator.md), defaulting to the faithful readings. */
export const QUIRKS_SCHEMA = z.strictObject({
  reportParams: z.enum(REPORT_PARAMS_FORMS).default('any'),
  auth: z.enum(['any', 'bearer', 'x-api-key']).default('any'),
  stringValues: z.boolean().default(false),
  emptyAsArray: z.boolean().default(false),
  totals: z.enum(['normal', 'missing', 'empty-array']).default('normal'),
  sortKeys: z.boolean().default(false),
  htmlErrors: z.boolean().default(false),
  gzip: z.boolean().default(false),
  rateLimitHeaders: z.boolean().default(false),
  strict: z.boolean().default(false),
  unknownFields: z.enum(['drop', 'reject']).default('drop'),
  clockSkewSeconds: z.number().int().min(-86_400).max(86_400).default(0),
  reportShape: z.enum(['nested', 'rows']).default('nested'),
  echoKey: z.array(z.enum(ECHO_PLACES)).default([]),
  echoKeyAs: z.enum(ECHO_FORMS).default('json'),
  /** A longer GET /reports range is a 400 naming the limit (0: no limit), as servers that cap a range. */
  maxDaysPerRequest: z.number().int().min(0).max(366).default(0),
  /** A report answers this many ms later per 1,000 rows it sends: a big range costs a server time. */
  msPer1000Rows: z.number().min(0).max(60_000).default(0),
});

export type EmulatorQuirks = z.input<typeof QUIRKS_SCHEMA>;

export type Quirks = Readonly<z.output<typeof QUIRKS_SCHEMA>>;

export const FAITHFUL_QUIRKS: Quirks = Object.freeze(QUIRKS_SCHEMA.parse({}));

export function resolveQuirks(q: EmulatorQuirks = {}): Quirks {
  return Object.freeze(QUIRKS_SCHEMA.parse(q));
}

export function overlay<T extends object>(base: T, top: T): T {
  const out = { ...base };
  for (const [k, v] of Object.entries(top)) if (v !== undefined) Object.assign(out, { [k]: v });
  return out;
}

export const splitList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isOneOf<T extends string>(allowed: readonly T[], value: unknown): value is T {
  return allowed.some((a) => a === value);
}

export const PROFILE_NAMES = ['faithful', 'php', 'hostile', 'strict'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** What startEmulator takes; docs/emulator.md describes each. */
export interface EmulatorOptions {
  port?: number;
  host?: string;
  seed?: number;
  cellsPerDay?: number;
  lateDataDays?: number;
  now?: () => Date;
  demoKey?: boolean;
  keys?: EmulatorKey[];
  profile?: ProfileName;
  faults?: FaultOptions;
  quirks?: EmulatorQuirks;
  catalogue?: CatalogueSize;
  onRequest?: (entry: RequestLogEntry) => void;
}

/** What `onRequest` receives; never carries the API key. */
export interface RequestLogEntry {
  method: string;
  endpoint: string;
  status: number;
  fault?: FaultKind;
  ms: number;
  acceptEncoding?: string;
}

export type FaultKind = (typeof FAULT_BANDS)[number][1] | 'override' | 'latency' | 'echo_key';

export interface EmulatorStats {
  requests: Record<string, number>;
  faults: Record<string, number>;
}

/** A canned answer for the next `times` (default 1) requests whose path starts with `path`. */
export interface OverrideOptions {
  path: string;
  status: number;
  body: string | Buffer;
  headers?: Record<string, string>;
  times?: number;
}
