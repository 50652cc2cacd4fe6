import { isSpecDimension as isDimension, type SpecDimension as Dimension } from '../spec.js';
import { dayNumber } from '../report/cells.js';
import { badRequest } from './errors.js';

/** A validated GET /reports request. */
export interface ReportRequest {
  readonly from: string;
  readonly until: string;
  readonly dimensions: Dimension[];
}

/** The longest date range one request may span (the spec leaves it open). */
export const MAX_REPORT_DAYS = 366;

function isRealDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const t = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === text;
}

function dateParam(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '')
    throw badRequest(`${name} is required (YYYY-MM-DD).`, name);
  if (typeof value !== 'string' || !isRealDate(value))
    throw badRequest(`${name} must be a real date in the form YYYY-MM-DD.`, name);
  return value;
}

/** Dimension names from every accepted encoding: repeated, bracketed `dimensions[]`, comma separated, JSON array. */
function dimensionNames(query: URLSearchParams, body: Record<string, unknown>): string[] {
  const fromQuery = [...query.getAll('dimensions'), ...query.getAll('dimensions[]')];
  let raw: unknown[] = fromQuery;
  if (fromQuery.length === 0 && body.dimensions !== undefined) {
    if (typeof body.dimensions === 'string') raw = [body.dimensions];
    else if (Array.isArray(body.dimensions)) raw = body.dimensions;
    else throw badRequest('dimensions must be an array of dimension names.', 'dimensions');
  }
  return raw.flatMap((v, i) => {
    if (typeof v !== 'string') throw badRequest(`dimensions[${i}] must be a string.`, 'dimensions');
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  });
}

/**
 * Reads the report parameters from the query string, or, for those absent there, from a JSON body
 * (the spec's example sends one), and validates them (400 naming the parameter).
 */
export function parseReportRequest(query: URLSearchParams, body: unknown): ReportRequest {
  const b =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const from = dateParam(query.get('date_from') ?? b.date_from, 'date_from');
  const until = dateParam(query.get('date_until') ?? b.date_until, 'date_until');
  if (until < from) throw badRequest('date_until must not be before date_from.', 'date_until');
  if (dayNumber(until) - dayNumber(from) + 1 > MAX_REPORT_DAYS)
    throw badRequest(`A report may span at most ${MAX_REPORT_DAYS} days: split the range.`, 'date_until');
  const names = dimensionNames(query, b);
  if (names.length === 0)
    throw badRequest('dimensions is required: one or more dimension names.', 'dimensions');
  const seen = new Set<string>();
  for (const name of names) {
    if (!isDimension(name)) throw badRequest(`Unknown dimension "${name}".`, 'dimensions');
    if (seen.has(name)) throw badRequest(`Dimension "${name}" is requested twice.`, 'dimensions');
    seen.add(name);
  }
  return { from, until, dimensions: names as Dimension[] };
}
