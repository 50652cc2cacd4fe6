import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Dimension } from '../config/dimensions.js';
import { counterValue } from './counters.js';
import { ReconciliationError, ReportFormatError, showValue } from './errors.js';
import { Flattener } from './flatten.js';
import { reconcile, type Reconciliation } from './reconcile.js';
import { COUNTERS, type Counters, type ReportRow } from './types.js';

/** A report body turned into typed rows, with the API's totals and how the rows reconcile with them. */
export interface ParsedReport {
  rows: ReportRow[];
  totals: Counters;
  /** Number of leaves (items holding counters) found: equals rows.length. */
  leaves: number;
  reconciliation: Reconciliation;
}

export interface ParseOptions {
  /** Throw ReconciliationError when the rows do not sum to the totals (default: report it only). */
  readonly strict?: boolean;
}

export interface AsyncParseOptions extends ParseOptions {
  /** Units of work (about one per leaf) between yields to the event loop; default 20,000. */
  readonly chunk?: number;
}

/**
 * Parses a GET /reports body into rows typed per dimension, the totals and their reconciliation.
 * Pure and synchronous: about a second per million leaves, during which the event loop is blocked;
 * a worker should use parseReportAsync. Throws ReportFormatError or DimensionValueError, never
 * returns partial rows.
 */
export function parseReport(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: ParseOptions = {},
): ParsedReport {
  const { items, totals } = readEnvelope(body);
  const flattener = new Flattener(dimensions, items);
  flattener.step(Infinity);
  return finish(flattener.rows, totals, options);
}

/**
 * parseReport that yields to the event loop every `chunk` leaves, so a long flatten does not stall
 * timers, sockets or BullMQ's lock renewal. JSON.parse of the body itself still runs in one piece.
 */
export async function parseReportAsync(
  body: Buffer | string,
  dimensions: readonly Dimension[],
  options: AsyncParseOptions = {},
): Promise<ParsedReport> {
  const chunk = options.chunk ?? 20_000;
  const { items, totals } = readEnvelope(body);
  await yieldToEventLoop();
  const flattener = new Flattener(dimensions, items);
  while (!flattener.step(chunk)) await yieldToEventLoop();
  return finish(flattener.rows, totals, options);
}

function finish(rows: ReportRow[], totals: Counters, options: ParseOptions): ParsedReport {
  const reconciliation = reconcile(rows, totals);
  if (options.strict === true && !reconciliation.ok)
    throw new ReconciliationError(reconciliation.differences);
  return { rows, totals, leaves: rows.length, reconciliation };
}

/** The body's top level: `{ items, totals }`, with totals already checked. */
function readEnvelope(body: Buffer | string): { items: unknown; totals: Counters } {
  let text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    const what = text.trim().length === 0 ? 'an empty body' : `${text.length} characters`;
    throw new ReportFormatError('(body)', `not valid JSON (${(error as Error).message}) in ${what}`, {
      cause: error,
    });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ReportFormatError(
      '(body)',
      `expected an object with items and totals, found ${Array.isArray(doc) ? 'an array' : showValue(doc)}`,
    );
  }
  const top = doc as Record<string, unknown>;
  if (top.items === undefined) throw new ReportFormatError('items', 'missing: expected the report items');
  return { items: top.items, totals: readTotals(top.totals) };
}

function readTotals(raw: unknown): Counters {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ReportFormatError(
      'totals',
      raw === undefined
        ? 'missing: expected the five counters summed'
        : `expected an object of counters, found ${showValue(raw)}`,
    );
  }
  const o = raw as Record<string, unknown>;
  const totals = {} as Counters;
  for (const name of COUNTERS) {
    const n = counterValue(o[name]);
    if (n < 0) {
      throw new ReportFormatError(
        `totals.${name}`,
        o[name] === undefined
          ? 'the counter is missing'
          : `the counter is ${showValue(o[name])}: expected a non-negative integer below 2^53`,
      );
    }
    totals[name] = n;
  }
  return totals;
}
