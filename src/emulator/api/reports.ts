/** GET /reports: its parameters read in every form the spec allows (or only one, by a quirk) and checked. */
import { isRecord, splitList, type ReportParamsForm } from '../options.js';
import { isSpecDimension } from '../report/dimensions.js';
import type { ReportEngine } from '../report/render.js';
import { dayNumber, utcDay } from '../report/traffic.js';
import { badRequest, type Handler } from './http.js';

/** A memory guard, not a spec rule: cells one report may group (about 12 bytes a cell while it sorts). */
const MAX_REPORT_CELLS = 40_000_000;

const MAX_REPORT_DAYS = 366;

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

function bodyNames(body: Record<string, unknown>): unknown[] {
  if (body.dimensions === undefined) return [];
  if (typeof body.dimensions === 'string') return [body.dimensions];
  if (Array.isArray(body.dimensions)) return body.dimensions;
  throw badRequest('dimensions must be an array of dimension names.', 'dimensions');
}

/** Dimension values as a one-`form` server reads them, misreading the other forms as real servers do. */
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
  return typeof v === 'string' ? splitList(v) : [v];
}

export function reportHandlers(engine: ReportEngine, cellsPerDay: number): Record<string, Handler> {
  const handler: Handler = ({ query, body, quirks, now }) => {
    const b = isRecord(body) ? body : {};
    const form = quirks.reportParams;
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
    const days = dayNumber(until) - dayNumber(from) + 1;
    const most = quirks.maxDaysPerRequest;
    if (most > 0 && days > most)
      throw badRequest(
        `A report may span at most ${most} days per request; this one spans ${days}: ask for ${most} days or fewer.`,
        'date_until',
      );
    if (quirks.strict && days > MAX_REPORT_DAYS)
      throw badRequest(`A report may span at most ${MAX_REPORT_DAYS} days: split the range.`, 'date_until');
    const dimensions = names.map((name, i) => {
      if (!isSpecDimension(name)) throw badRequest(`Unknown dimension "${name}".`, 'dimensions');
      if (names.indexOf(name) < i) throw badRequest(`Dimension "${name}" is requested twice.`, 'dimensions');
      return name;
    });
    if (days * cellsPerDay > MAX_REPORT_CELLS)
      throw badRequest(
        `This emulator groups at most ${MAX_REPORT_CELLS} cells per report: ask for fewer days.`,
        'date_until',
      );
    let rows = 0;
    const report = engine.render(from, until, dimensions, utcDay(now), quirks, (n) => (rows = n));
    return { status: 200, body: report, delayMs: () => (rows / 1000) * quirks.msPer1000Rows };
  };
  return { 'GET /reports': handler };
}
