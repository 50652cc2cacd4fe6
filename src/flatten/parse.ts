import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Dimension } from '../config/dimensions.js';
import { counterValue } from './counters.js';
import { ReconciliationError, ReportFormatError, showValue } from './errors.js';
import { Flattener } from './flatten.js';
import { ReportScanner } from './scan.js';
import { reconcile, type Reconciliation } from './reconcile.js';
import { COUNTERS, type ReportRow, type Totals } from './types.js';

/** A report body turned into typed rows, with the API's totals and how the rows reconcile with them. */
export interface ParsedReport {
  rows: ReportRow[];
  /** The API's totals; a counter is null when the body did not give it (see Totals). */
  totals: Totals;
  /** Number of leaves (items holding counters) found: equals rows.length. */
  leaves: number;
  reconciliation: Reconciliation;
}

export interface ParseOptions {
  /**
   * Throw ReconciliationError when the rows cannot be reconciled with the totals: they differ, or
   * the body has no (or partial) totals. Default: report it only.
   */
  readonly strict?: boolean;
}

export interface AsyncParseOptions extends ParseOptions {
  /** Units of work (about one per leaf) between yields to the event loop; default 20,000. */
  readonly chunk?: number;
}

/**
 * Parses a GET /reports body into rows typed per dimension, the totals and their reconciliation.
 * Pure and synchronous; streams the bytes (ReportScanner) instead of building the JSON tree, so
 * a million leaves cost a second or two of CPU and no object tree. Throws ReportFormatError or
 * DimensionValueError (or ReconciliationError when strict), never returns partial rows.
 */
export function parseReport(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: ParseOptions = {},
): ParsedReport {
  const scanner = new ReportScanner(toBuffer(body), dimensions);
  scanner.step(Infinity);
  return finish(scanner.rows, readTotals(scanner.totals), options);
}

/**
 * parseReport that yields to the event loop every `chunk` members, so a long parse does not stall
 * timers, sockets or BullMQ's lock renewal.
 */
export async function parseReportAsync(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: AsyncParseOptions = {},
): Promise<ParsedReport> {
  const chunk = options.chunk ?? 20_000;
  const scanner = new ReportScanner(toBuffer(body), dimensions);
  while (!scanner.step(chunk)) await yieldToEventLoop();
  return finish(scanner.rows, readTotals(scanner.totals), options);
}

/**
 * The same result from a body already parsed with JSON.parse (e.g. a stored object), through the
 * tree walk. parseReport and this agree on every accepted body.
 */
export function parseReportObject(
  doc: unknown,
  dimensions: readonly Dimension[],
  options: ParseOptions = {},
): ParsedReport {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ReportFormatError(
      '(body)',
      `expected an object with items and totals, found ${Array.isArray(doc) ? 'an array' : showValue(doc)}`,
    );
  }
  const top = doc as Record<string, unknown>;
  if (top.items === undefined) throw new ReportFormatError('items', 'missing: expected the report items');
  const flattener = new Flattener(dimensions, top.items);
  flattener.step(Infinity);
  return finish(flattener.rows, readTotals(top.totals), options);
}

/** A body as bytes. */
export function toBuffer(body: Buffer | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

function finish(rows: ReportRow[], totals: Totals, options: ParseOptions): ParsedReport {
  const reconciliation = reconcile(rows, totals);
  if (options.strict === true && !reconciliation.ok)
    throw new ReconciliationError(reconciliation.differences, reconciliation.reason);
  return { rows, totals, leaves: rows.length, reconciliation };
}

/**
 * The API's `totals` as validated counters. Missing totals (absent, null, `[]` or `{}`: some
 * servers send an empty object as an empty array) give all nulls, and a counter absent or null
 * gives null: the rows still load, unreconciled. A counter that is there but not a non-negative
 * integer, or totals of another type, are a ReportFormatError.
 */
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
