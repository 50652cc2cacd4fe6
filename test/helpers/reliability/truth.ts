// Ground truth for the reliability suite: what a fault-free pull of a period returns, and a
// row-by-row comparison of the warehouse against it.
import type { Pool } from 'pg';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { createApiClient, type ApiClientOptions } from '../../../src/api/client.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { type Counters, type Period } from '../../../src/flatten/types.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';
import { ident, qualified, reportTable } from '../../../src/platform/pg/handle.js';

/** One period's expected rows (as `dims|counters` text lines, sorted) and totals. */
export interface PeriodTruth {
  readonly rows: readonly string[];
  readonly totals: Counters;
}

/** Truth per report name, then per period start. */
export type Truth = Map<string, Map<string, PeriodTruth>>;

/** A period of one day. */
export const day = (d: string): Period => ({ start: d, end: d });

/** The days from..to inclusive, as one-day periods. */
export function days(from: string, to: string): Period[] {
  const out: Period[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to); t += 86_400_000)
    out.push(day(new Date(t).toISOString().slice(0, 10)));
  return out;
}

const line = (dims: readonly string[], counters: readonly (number | string)[]) =>
  `${dims.join(',')}|${counters.join(',')}`;

/**
 * Pulls every report x period once from an emulator with no faults (the caller makes sure of that)
 * and parses it with the project's parser: the ground truth the warehouse must equal. `options`
 * speak to a server that takes one request form or auth header only.
 */
export async function fetchTruth(
  baseUrl: string,
  apiKey: string,
  reports: readonly ReportJob[],
  periods: readonly Period[],
  options: Partial<Pick<ApiClientOptions, 'auth' | 'dimensionsEncoding'>> = {},
): Promise<Truth> {
  const client = createApiClient({
    baseUrl,
    apiKey,
    attempts: 1,
    ...options,
    auth: options.auth ?? 'bearer',
  });
  const truth: Truth = new Map();
  try {
    for (const report of reports) {
      const perPeriod = new Map<string, PeriodTruth>();
      for (const period of periods) {
        const raw = await client.fetchReport({ dimensions: report.dimensions, period });
        const parsed = parseReport(await raw.body.bytes(), report.dimensions, { strict: true });
        perPeriod.set(period.start, {
          rows: parsed.rows.map((r) => line(r.dims, r.counters)).sort(),
          // Strict parsing reconciled all five counters, so none is null.
          totals: parsed.totals as Counters,
        });
      }
      truth.set(report.name, perPeriod);
    }
  } finally {
    await client.close();
  }
  return truth;
}

/** How the warehouse compares with the truth. */
export interface Verdict {
  /** Periods whose rows and totals equal the truth exactly. */
  readonly exact: number;
  readonly total: number;
  /** Rows beyond the first with the same period and dimension values, over all periods. */
  readonly duplicates: number;
  /** `report period: what differs`, one per inexact period. */
  readonly problems: readonly string[];
}

/** Rows of this account only, when given (a column every warehouse table of a pull has). */
const ofAccount = '($3::text IS NULL OR account = $3)';

/**
 * The rows of one period in the warehouse (of one account, when given), as comparable text lines
 * (duplicates kept).
 */
export async function warehouseRows(
  pool: Pool,
  schema: string,
  report: ReportJob,
  period: Period,
  account?: string,
): Promise<string[]> {
  const cols = [...report.dimensions, ...COUNTERS].map((c) => `${ident(c)}::text AS ${ident(c)}`);
  const { rows } = await pool.query<Record<string, string>>(
    `SELECT ${cols.join(', ')} FROM ${qualified(schema, reportTable(report.name))} WHERE period_start = $1 AND period_end = $2 AND ${ofAccount}`,
    [period.start, period.end, account ?? null],
  );
  return rows
    .map((r) =>
      line(
        report.dimensions.map((d) => r[d] ?? ''),
        COUNTERS.map((c) => r[c] ?? ''),
      ),
    )
    .sort();
}

/**
 * Compares every report x period of `truth` with the warehouse, row by row and total by total:
 * with `account`, that account's rows and totals only.
 */
export async function verify(
  pool: Pool,
  schema: string,
  reports: readonly ReportJob[],
  truth: Truth,
  only?: (report: string, period: Period) => boolean,
  account?: string,
): Promise<Verdict> {
  let exact = 0;
  let total = 0;
  let duplicates = 0;
  const problems: string[] = [];
  for (const report of reports) {
    for (const [start, expected] of truth.get(report.name) ?? []) {
      const period = day(start);
      if (only !== undefined && !only(report.name, period)) continue;
      total++;
      const found = await warehouseRows(pool, schema, report, period, account);
      const keys = found.map((l) => l.split('|')[0]);
      duplicates += keys.length - new Set(keys).size;
      const totals = await totalsOf(pool, schema, report.name, period, account);
      const sameRows = found.length === expected.rows.length && found.every((l, i) => l === expected.rows[i]);
      const sameTotals = totals !== undefined && COUNTERS.every((c) => totals[c] === expected.totals[c]);
      if (sameRows && sameTotals) exact++;
      else
        problems.push(
          `${report.name} ${start}: ${found.length} rows (expected ${expected.rows.length})` +
            (sameRows ? '' : ', rows differ') +
            (sameTotals ? '' : totals === undefined ? ', no totals' : ', totals differ'),
        );
    }
  }
  return { exact, total, duplicates, problems };
}

async function totalsOf(
  pool: Pool,
  schema: string,
  report: string,
  period: Period,
  account: string | undefined,
): Promise<Counters | undefined> {
  const { rows } = await pool.query<Record<string, string>>(
    `SELECT ${COUNTERS.map((c) => `${ident(c)}::text AS ${ident(c)}`).join(', ')} FROM ${qualified(schema, 'report_totals')} WHERE period_start = $1 AND period_end = $2 AND ${ofAccount} AND report = $4`,
    [period.start, period.end, account ?? null, report],
  );
  const row = rows[0];
  if (row === undefined || rows.length > 1) return undefined;
  return Object.fromEntries(COUNTERS.map((c) => [c, Number(row[c])])) as Counters;
}
