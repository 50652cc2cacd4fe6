// A report body held whole, parsed into typed rows and totals, reconciled with the API's totals.
import { type Dimension, COUNTERS } from '../platform/config/dimensions.js';
import { counterValue, reconcile, type Reconciliation } from './rows.js';
import { reconciliationError, ReportFormatError, showValue } from './errors.js';
import { ReportScanner } from './scan.js';
import { type ReportRow, type Totals } from './types.js';

/** A report body turned into typed rows, with the API's totals and how the rows reconcile with them. */
export interface ParsedReport {
  rows: ReportRow[];
  totals: Totals; // The API's totals; a counter is null when the body did not give it (see Totals).
  leaves: number; // Number of leaves (items holding counters) found: equals rows.length.
  reconciliation: Reconciliation;
}

export interface ParseOptions {
  /** Throw reconciliationError's when the rows cannot be reconciled with the totals (default: report it). */
  readonly strict?: boolean;
}

/** Parses a GET /reports body into typed rows, totals and reconciliation, scanning bytes (no JSON tree: a
 * million leaves cost a second or two). Throws ReportFormatError, never returns partial rows. */
export function parseReport(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: ParseOptions = {},
): ParsedReport {
  const scanner = new ReportScanner(toBuffer(body), dimensions);
  scanner.step(Infinity);
  return finish(scanner.rows, readTotals(scanner.totals), options);
}

/** Chunks as one Buffer: the only chunk itself, uncopied, when there is one. */
export function joined(chunks: readonly Buffer[], size?: number): Buffer {
  const [only] = chunks;
  return chunks.length === 1 && only !== undefined ? only : Buffer.concat(chunks, size);
}

export function toBuffer(body: Buffer | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/** The parsed report of `rows` and `totals`, reconciled (strictly under options.strict). */
export function finish(rows: ReportRow[], totals: Totals, options: ParseOptions): ParsedReport {
  const reconciliation = reconcile(rows, totals);
  if (options.strict === true && !reconciliation.ok)
    throw reconciliationError(reconciliation.differences, reconciliation.reason);
  return { rows, totals, leaves: rows.length, reconciliation };
}

/** The API's `totals` as validated counters: missing ones (absent, null, `[]` or `{}`) or a counter absent or
 * null give null (the rows load unreconciled); a bad counter or totals type is a ReportFormatError. */
export function readTotals(raw: unknown): Totals {
  const totals = {} as Totals;
  for (const name of COUNTERS) totals[name] = null;
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return totals;
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ReportFormatError('totals', `expected an object of counters, found ${showValue(raw)}`);
  const o = raw as Record<string, unknown>;
  for (const name of COUNTERS) {
    if (o[name] === undefined || o[name] === null) continue;
    const n = counterValue(o[name]);
    if (n < 0)
      throw new ReportFormatError(
        `totals.${name}`,
        `the counter is ${showValue(o[name])}: expected a non-negative integer below 2^53`,
      );
    totals[name] = n;
  }
  return totals;
}
