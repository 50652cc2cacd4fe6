// The probe requests, built without I/O: auth headers per form, GET /reports per parameter form,
// and the dates asked for.
import { reportRequest } from '../api/client.js';
import type { Dimension } from '../config/dimensions.js';
import { addDays } from '../dates/calendar.js';
import type { Period } from '../flatten/types.js';
import type { ProbeRequest } from './http.js';
import type { AuthForm, ReportForm } from './types.js';

/** The header carrying the key in one form. */
export function authHeaders(form: AuthForm, key: string): Record<string, string> {
  return form === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
}

/** GET /reports for these dimensions and period, its parameters sent in `form`. */
export function reportProbe(
  form: ReportForm,
  dimensions: readonly Dimension[],
  period: Period,
  headers: Readonly<Record<string, string>>,
): ProbeRequest {
  // The client's own request builder: the doctor probes exactly what a pull would send.
  const request = reportRequest({ dimensions, period }, form);
  return request.body === undefined
    ? { path: request.path, headers }
    : { path: request.path, headers, body: JSON.stringify(request.body) };
}

/** Yesterday (UTC) alone: the scope probe's period. */
export function yesterday(now: Date): Period {
  const day = addDays(now.toISOString().slice(0, 10), -1);
  return { start: day, end: day };
}

/** The week up to yesterday (UTC): one day alone may hold no traffic to tell the forms apart by. */
export function formPeriod(now: Date): Period {
  const today = now.toISOString().slice(0, 10);
  return { start: addDays(today, -7), end: addDays(today, -1) };
}
