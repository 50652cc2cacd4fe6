import type { ReportEngine } from '../report/engine.js';
import { reportEncoding } from '../report/encoding.js';
import { utcDay } from '../report/late.js';
import { badRequest } from './errors.js';
import type { Handler } from './http.js';
import { parseReportRequest } from './report-input.js';

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
