// Observations for the doctor's verdict tests: answers and report bodies built by hand.
import { gzipSync } from 'node:zlib';
import type {
  Answer,
  FormObservation,
  HttpAnswer,
  Observations,
  ReportForm,
  Row,
} from '../../../src/doctor/types.js';
import { type Counters } from '../../../src/flatten/types.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';

export const PERIOD = { start: '2026-03-01', end: '2026-03-07' };

export function http(status: number, body: unknown = {}, extra: Partial<HttpAnswer> = {}): HttpAnswer {
  return {
    kind: 'http',
    status,
    body: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
    contentEncoding: undefined,
    apiMessage: undefined,
    ...extra,
  };
}

export function none(code = 'ECONNREFUSED', detail = 'connect ECONNREFUSED 127.0.0.1:9'): Answer {
  return { kind: 'none', code, detail };
}

/** Counters scaled by n, consistent among themselves. */
export function counters(n: number): Counters {
  return {
    ad_requests: 10 * n,
    filled_impressions: 8 * n,
    impressions: 8 * n,
    measurable_impressions: 6 * n,
    viewable_impressions: 3 * n,
  };
}

function sum(list: Counters[]): Counters {
  const out = counters(0);
  for (const c of list) for (const k of COUNTERS) out[k] += c[k];
  return out;
}

const CELLS: Array<[string, string, number]> = [
  ['2026-03-01', '862599431', 1],
  ['2026-03-01', '862599432', 2],
  ['2026-03-02', '862599431', 3],
];

/** The nested [day, campaign_id] report a correct server answers. */
export function pairReport(cells = CELLS): unknown {
  const items: Record<string, Record<string, Counters>> = {};
  for (const [day, id, n] of cells) (items[day] ??= {})[id] = counters(n);
  return { items, totals: sum(cells.map((c) => counters(c[2]))) };
}

/** The [day] report of the same traffic. */
export function dayReport(cells = CELLS): unknown {
  const items: Record<string, Counters> = {};
  for (const [day, , n] of cells) items[day] = sum([items[day] ?? counters(0), counters(n)]);
  return { items, totals: sum(cells.map((c) => counters(c[2]))) };
}

/** What a server that kept only the last `dimensions` value answers: one level, by campaign id. */
export function lastOnlyReport(cells = CELLS): unknown {
  const items: Record<string, Counters> = {};
  for (const [, id, n] of cells) items[id] = sum([items[id] ?? counters(0), counters(n)]);
  return { items, totals: sum(cells.map((c) => counters(c[2]))) };
}

export const GOOD_FORM: FormObservation = { pair: http(200, pairReport()), day: http(200, dayReport()) };

export function gzipped(body: unknown): HttpAnswer {
  return http(200, gzipSync(Buffer.from(JSON.stringify(body))), { contentEncoding: 'gzip' });
}

/** A healthy server that accepts everything: every probe answered as it should. */
export function observations(over: Partial<Observations> = {}): Observations {
  const campaigns = http(200, { items: [{ campaign_id: 862599431 }] });
  const forms: Partial<Record<ReportForm, FormObservation>> = {
    repeat: GOOD_FORM,
    brackets: GOOD_FORM,
    comma: GOOD_FORM,
    'json-body': GOOD_FORM,
  };
  return {
    baseUrl: 'http://127.0.0.1:8787/v2',
    configured: { auth: 'bearer', reportParams: 'repeat' },
    tls: undefined,
    auth: { bearer: campaigns, 'x-api-key': campaigns },
    scopes: { campaigns, creatives: http(200, { items: [] }), reports: http(200, dayReport()) },
    formPeriod: PERIOD,
    forms,
    gzip: http(200, dayReport()),
    clock: { serverDate: 'Sun, 01 Mar 2026 12:00:00 GMT', localMs: Date.parse('2026-03-01T12:00:00.400Z') },
    rateLimitHeaders: {},
    throttled: 0,
    ...over,
  };
}

/** "Now" of the verdict tests: a day after PERIOD. */
export const NOW = Date.parse('2026-03-08T12:00:00Z');

/** The row of a check. */
export const row = (rows: readonly Row[], check: string): Row | undefined =>
  rows.find((r) => r.check === check);
