import type { ReportEngine } from '../report/engine.js';
import { utcDay } from '../report/late.js';
import { badRequest } from './errors.js';
import type { Handler } from './http.js';
import { parseReportRequest } from './report-input.js';

/** Cells one report may group (days x cells per day): keeps one request from exhausting memory. */
export const MAX_REPORT_CELLS = 40_000_000;

/** The GET /reports handler: validated parameters, then a streamed body from the report engine. */
export function reportHandlers(engine: ReportEngine, cellsPerDay: number): Record<string, Handler> {
  return {
    'GET /reports': (ctx) => {
      const request = parseReportRequest(ctx.query, ctx.body);
      const days = Math.round((Date.parse(request.until) - Date.parse(request.from)) / 86_400_000) + 1;
      if (days * cellsPerDay > MAX_REPORT_CELLS)
        throw badRequest(
          `This emulator groups at most ${MAX_REPORT_CELLS} cells per report: ask for fewer days.`,
          'date_until',
        );
      return {
        status: 200,
        body: engine.render(request.from, request.until, request.dimensions, utcDay(ctx.now)),
      };
    },
  };
}
