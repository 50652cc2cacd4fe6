/** Public option and handle types of the emulator (re-exported by src/emulator/index.ts). */

/** A key's permission areas: one per endpoint group of the spec. */
export type Scope = 'campaigns' | 'creatives' | 'reports';

/** One accepted API key and what it may do. Omitted restrictions mean "everything". */
export interface EmulatorKey {
  key: string;
  scopes?: Scope[];
  /** Allowed HTTP methods, e.g. ['GET']. */
  methods?: string[];
  /** Allowed client IP addresses (IPv4 or IPv6, compared after stripping an IPv4-mapped ::ffff: prefix). */
  ips?: string[];
  /** Written to account_id_modified/account_id_created by this key's writes. */
  accountId?: number;
}

export interface FaultOptions {
  /** Fraction answered 500 with a JSON body. */
  failRate?: number;
  /** Fraction answered 429. */
  rateLimitRate?: number;
  /** Retry-After of those 429s (default 1). */
  retryAfterSeconds?: number;
  /** Fraction whose connection is destroyed without a response. */
  dropRate?: number;
  /** Fraction answered 200 with a malformed JSON body. */
  malformedRate?: number;
  /** Fraction answered 200 whose body is cut off mid-stream (content-length kept). */
  truncateRate?: number;
  /** Added latency, fixed or uniform range [min, max]. */
  latencyMs?: number | [number, number];
  /** Restrict faults to paths starting with these (e.g. ['/v2/reports']); default all of /v2. */
  paths?: string[];
  /** Fault PRNG seed (reproducible sequences). */
  seed?: number;
}

export interface EmulatorOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 1. */
  seed?: number;
  /** Traffic cells per day, default 2000. */
  cellsPerDay?: number;
  /** Late-data window N in days, default 3 (0 = every day final). */
  lateDataDays?: number;
  /** The emulator clock, default real time; also settable at runtime. */
  now?: () => Date;
  /** Accept the full-access key 'demo-key' (default true). */
  demoKey?: boolean;
  /** Extra keys. */
  keys?: EmulatorKey[];
  /** Initial faults. */
  faults?: FaultOptions;
  /** Seeded catalogue size. */
  catalogue?: { campaigns?: number; creativesPerCampaign?: number; zones?: number };
  /** Called once per served /v2 request (for logging); must not throw. */
  onRequest?: (entry: RequestLogEntry) => void;
}

/** What `onRequest` receives; never carries the API key. */
export interface RequestLogEntry {
  method: string;
  /** Normalised endpoint, e.g. 'GET /v2/campaigns/:id'. */
  endpoint: string;
  status: number;
  /** The fault served instead of a normal answer, if any. */
  fault?: FaultKind;
  ms: number;
}

/** Kinds of injected faults, as counted in EmulatorStats.faults. */
export type FaultKind = 'fail' | 'rate_limit' | 'drop' | 'malformed' | 'truncate' | 'override' | 'latency';

/**
 * Counters since start or the last reset. `requests` is keyed by endpoint ('GET /v2/reports',
 * ids normalised to :id); `faults` by endpoint (requests not answered normally) and by FaultKind.
 */
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

export interface RunningEmulator {
  /** Base URL ending in /v2, e.g. http://127.0.0.1:41234/v2. */
  url: string;
  /** http://127.0.0.1:41234 (control endpoints live at origin + '/_control/...'). */
  origin: string;
  /** Replaces the current faults. */
  setFaults(f: FaultOptions): void;
  setNow(d: Date): void;
  stats(): EmulatorStats;
  resetStats(): void;
  /** The next `times` requests matching `path` (prefix, e.g. '/v2/reports') get this canned answer instead. */
  override(o: OverrideOptions): void;
  close(): Promise<void>;
}
