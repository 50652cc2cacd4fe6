// The emulator's options and handle, and the schemas that validate its quirks and faults wherever they come
// from (options, flags, setQuirks/setFaults, the control endpoints): one source for both.
import { z } from 'zod';
import type { CatalogueSize } from './catalogue.js';

const SCOPES = ['campaigns', 'creatives', 'reports'] as const;
/** A key's permission areas: one per endpoint group of the spec. */
export type Scope = (typeof SCOPES)[number];

/** One accepted API key and what it may do; an omitted restriction allows everything. */
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

/** Each fault rate (docs/emulator.md) and the fault it injects. Each is a band of one uniform draw, in this
 * order, so together at most 1. */
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
    /** Path prefixes faults apply to (default all of /v2). */
    paths: z.array(z.string()).optional(),
    seed: z.number().int().optional(),
    /** 429s in one storm, the starting request included (default 5). */
    rateLimitStormLength: z.number().int().min(1).max(10_000).optional(),
    /** With the htmlErrors quirk, the share of injected 5xx sent as HTML 502 pages (default 1). */
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

/** The GET /reports parameter forms: `dimensions=` repeated, PHP `dimensions[]=`, comma-joined, JSON body. */
export const REPORT_PARAMS_FORMS = ['any', 'repeat', 'brackets', 'comma', 'json-body'] as const;
export type ReportParamsForm = (typeof REPORT_PARAMS_FORMS)[number];

/** The choices the spec leaves open (docs/emulator.md), defaulting to the faithful readings. */
export const QUIRKS_SCHEMA = z.strictObject({
  /** The only GET /reports parameter form understood; the others are misread as a real server would. */
  reportParams: z.enum(REPORT_PARAMS_FORMS).default('any'),
  /** The only auth header accepted; the other form's key counts as missing (401). */
  auth: z.enum(['any', 'bearer', 'x-api-key']).default('any'),
  /** Numbers as strings and booleans as "1"/"0" or "true"/"false", in reports and entity reads. */
  stringValues: z.boolean().default(false),
  /** Empty or unset objects sent as [] (pricing, pacing, targeting...; totals of an empty report). */
  emptyAsArray: z.boolean().default(false),
  totals: z.enum(['normal', 'missing', 'empty-array']).default('normal'),
  /** Object keys in code-unit order (entity fields; report totals before items, item keys sorted). */
  sortKeys: z.boolean().default(false),
  /** Injected 5xx faults come as an HTML 502 Bad Gateway page instead of JSON 500. */
  htmlErrors: z.boolean().default(false),
  /** Serve `Content-Encoding: gzip` when the request sends `Accept-Encoding: gzip`. */
  gzip: z.boolean().default(false),
  /** X-RateLimit-Limit / -Remaining / -Reset headers on every answer. */
  rateLimitHeaders: z.boolean().default(false),
  /** Rules the spec does not state: limit <= 1000, 366 days per report, 2-letter countries, 404 before 400. */
  strict: z.boolean().default(false),
  /** Unknown fields in a PUT/POST body: ignored or a 400 naming the field. */
  unknownFields: z.enum(['drop', 'reject']).default('drop'),
  /** Seconds added to the Date header: a day either way keeps it a valid HTTP date. */
  clockSkewSeconds: z.number().int().min(-86_400).max(86_400).default(0),
  reportShape: z.enum(['nested', 'rows']).default('nested'),
  /** Where a careless server repeats the caller's API key, for tests that the key is never stored. */
  echoKey: z.array(z.enum(ECHO_PLACES)).default([]),
  /** How the echoed key is written (see keyIn). */
  echoKeyAs: z.enum(ECHO_FORMS).default('json'),
});

export type EmulatorQuirks = z.input<typeof QUIRKS_SCHEMA>;

/** Every quirk filled in: what the server consults per request. */
export type Quirks = Readonly<z.output<typeof QUIRKS_SCHEMA>>;

export const FAITHFUL_QUIRKS: Quirks = Object.freeze(QUIRKS_SCHEMA.parse({}));

/** Validates quirks (throws a ZodError naming the field) and fills in the faithful defaults. */
export function resolveQuirks(q: EmulatorQuirks = {}): Quirks {
  return Object.freeze(QUIRKS_SCHEMA.parse(q));
}

/** `base` with each field of `top` that is not undefined laid over it. */
export function overlay<T extends object>(base: T, top: T): T {
  const out = { ...base };
  for (const [k, v] of Object.entries(top)) if (v !== undefined) Object.assign(out, { [k]: v });
  return out;
}

/** The non-empty items of a comma-separated list, trimmed. */
export const splitList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `value` is one of `allowed`. */
export function isOneOf<T extends string>(allowed: readonly T[], value: unknown): value is T {
  return allowed.some((a) => a === value);
}

export const PROFILE_NAMES = ['faithful', 'php', 'hostile', 'strict'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** What startEmulator takes; docs/emulator.md describes each. */
export interface EmulatorOptions {
  /** Defaults: port 0 (a free port), host 127.0.0.1, seed 1, 2000 cells a day, 3 late-data days. */
  port?: number;
  host?: string;
  seed?: number;
  cellsPerDay?: number;
  lateDataDays?: number;
  /** The emulator clock, default real time; also settable at runtime. */
  now?: () => Date;
  /** Accept the full-access key 'demo-key' (default true). */
  demoKey?: boolean;
  keys?: EmulatorKey[];
  /** A preset of quirks and faults (default 'faithful'); `faults` and `quirks` override it field by field. */
  profile?: ProfileName;
  faults?: FaultOptions;
  quirks?: EmulatorQuirks;
  catalogue?: CatalogueSize;
  /** Called once per served /v2 request (for logging); must not throw. */
  onRequest?: (entry: RequestLogEntry) => void;
}

/** What `onRequest` receives; never carries the API key. */
export interface RequestLogEntry {
  method: string;
  endpoint: string;
  status: number;
  fault?: FaultKind;
  ms: number;
  /** The request's Accept-Encoding header as sent, if any. */
  acceptEncoding?: string;
}

/** Kinds of injected faults, as counted in EmulatorStats.faults. */
export type FaultKind = (typeof FAULT_BANDS)[number][1] | 'override' | 'latency' | 'echo_key';

/** Counters since start or the last reset, by endpoint ('GET /v2/campaigns/:id'); faults also by FaultKind. */
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
