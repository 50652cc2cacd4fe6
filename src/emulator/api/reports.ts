import { reportEncoding, type ReportEngine } from '../report/render.js';
import { dayNumber, utcDay } from '../report/traffic.js';
import { badRequest, type Handler } from './http.js';
import { isSpecDimension, type Dimension } from '../report/dimensions.js';
import type { ReportParamsForm } from '../options.js';

/**
 * Cells one report may group (days x cells per day): a resource guard, not a rule of the spec, that
 * keeps one request from exhausting the emulator's memory (about 12 bytes a cell while it sorts).
 */
export const MAX_REPORT_CELLS = 40_000_000;

/** The GET /reports handler: validated parameters, then a streamed body from the report engine. */
export function reportHandlers(engine: ReportEngine, cellsPerDay: number): Record<string, Handler> {
  return {
    'GET /reports': (ctx) => {
      const request = parseReportRequest(ctx.query, ctx.body, {
        form: ctx.quirks.reportParams,
        strict: ctx.quirks.strict,
      });
      const days = Math.round((Date.parse(request.until) - Date.parse(request.from)) / 86_400_000) + 1;
      if (days * cellsPerDay > MAX_REPORT_CELLS)
        throw badRequest(
          `This emulator groups at most ${MAX_REPORT_CELLS} cells per report: ask for fewer days.`,
          'date_until',
        );
      return {
        status: 200,
        body: engine.render(
          request.from,
          request.until,
          request.dimensions,
          utcDay(ctx.now),
          reportEncoding(ctx.quirks),
        ),
      };
    },
  };
}

/** A validated GET /reports request. */
export interface ReportRequest {
  readonly from: string;
  readonly until: string;
  readonly dimensions: Dimension[];
}

/** The longest date range one request may span under the strict quirk (the spec leaves it open). */
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

/** A query parameter's last value, as PHP and many frameworks read a repeated one; undefined when absent. */
function lastValue(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  return all.length === 0 ? undefined : all[all.length - 1];
}

/** Names from a JSON body's `dimensions`: an array of names (a single name string as one). */
function bodyNames(body: Record<string, unknown>): unknown[] {
  if (body.dimensions === undefined) return [];
  if (typeof body.dimensions === 'string') return [body.dimensions];
  if (Array.isArray(body.dimensions)) return body.dimensions;
  throw badRequest('dimensions must be an array of dimension names.', 'dimensions');
}

/**
 * The raw dimension values as a server that understands only `form` reads them. 'any' takes every
 * encoding (repeated, bracketed `dimensions[]`, comma separated, JSON array); the one-form servers
 * misread the others the way real ones do: a PHP ('brackets') or 'comma' server keeps only the last
 * of repeated `dimensions=`, a query-only server ignores a JSON body and a 'json-body' one the query.
 */
function rawNames(form: ReportParamsForm, query: URLSearchParams, body: Record<string, unknown>): unknown[] {
  switch (form) {
    case 'any': {
      const fromQuery = [...query.getAll('dimensions'), ...query.getAll('dimensions[]')];
      return (fromQuery.length > 0 ? fromQuery : bodyNames(body)).flatMap(splitComma);
    }
    case 'repeat':
      return query.getAll('dimensions');
    case 'brackets': {
      const bracketed = query.getAll('dimensions[]');
      const plain = lastValue(query, 'dimensions');
      return bracketed.length > 0 ? bracketed : plain === undefined ? [] : [plain];
    }
    case 'comma':
      return splitComma(lastValue(query, 'dimensions') ?? '');
    case 'json-body':
      return bodyNames(body);
  }
}

function splitComma(v: unknown): unknown[] {
  if (typeof v !== 'string') return [v];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** How the request's parameters are read: the parameter form the server understands, and its rules. */
export interface ReportInputRules {
  readonly form: ReportParamsForm;
  /** Enforce MAX_REPORT_DAYS (a rule the spec does not state). */
  readonly strict: boolean;
}

/**
 * Reads the report parameters as a server that understands `rules.form` does (by default: the query
 * string, or for those absent there a JSON body, as the spec's example sends one) and validates them
 * (400 naming the parameter).
 */
export function parseReportRequest(
  query: URLSearchParams,
  body: unknown,
  rules: ReportInputRules = { form: 'any', strict: false },
): ReportRequest {
  const b =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const { form } = rules;
  const names = rawNames(form, query, b).map((v, i) => {
    if (typeof v !== 'string') throw badRequest(`dimensions[${i}] must be a string.`, 'dimensions');
    return v;
  });
  if (names.length === 0 || names.every((n) => n === ''))
    throw badRequest('dimensions is required: one or more dimension names.', 'dimensions');
  const param = (name: string) =>
    form === 'json-body' ? b[name] : form === 'any' ? (query.get(name) ?? b[name]) : lastValue(query, name);
  const from = dateParam(param('date_from'), 'date_from');
  const until = dateParam(param('date_until'), 'date_until');
  if (until < from) throw badRequest('date_until must not be before date_from.', 'date_until');
  if (rules.strict && dayNumber(until) - dayNumber(from) + 1 > MAX_REPORT_DAYS)
    throw badRequest(`A report may span at most ${MAX_REPORT_DAYS} days: split the range.`, 'date_until');
  const seen = new Set<string>();
  for (const name of names) {
    if (!isSpecDimension(name)) throw badRequest(`Unknown dimension "${name}".`, 'dimensions');
    if (seen.has(name)) throw badRequest(`Dimension "${name}" is requested twice.`, 'dimensions');
    seen.add(name);
  }
  return { from, until, dimensions: names as Dimension[] };
}
