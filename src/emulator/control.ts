import { z } from 'zod';
import { ApiError, badRequest } from './api/errors.js';
import { json, type Reply } from './api/http.js';
import { FAULT_OPTIONS_SCHEMA } from './faults.js';
import { QUIRKS_SCHEMA } from './quirks.js';
import type { RunningEmulator } from './types.js';

const CLOCK_SCHEMA = z.object({
  now: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'an ISO date-time'),
});
const OVERRIDE_SCHEMA = z.object({
  path: z.string().startsWith('/'),
  status: z.number().int().min(100).max(599),
  body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]),
  headers: z.record(z.string(), z.string()).optional(),
  times: z.number().int().min(1).optional(),
});

/** The body checked against `schema`, or a 400 naming the first field at fault. */
function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
  const field = [...(issue?.path ?? []), ...keys.slice(0, 1)].join('.');
  const message = keys.length > 0 ? 'is not a known field' : (issue?.message ?? 'invalid');
  throw badRequest(`${field || 'body'}: ${message}`, field || undefined);
}

/**
 * The control endpoints outside /v2 (no auth): GET /_control/stats, POST /_control/stats/reset,
 * PUT /_control/faults, GET and PUT /_control/quirks, PUT /_control/clock, POST /_control/override.
 */
export function handleControl(
  emulator: Omit<RunningEmulator, 'url' | 'origin' | 'close'>,
  method: string,
  path: string,
  body: unknown,
): Reply {
  const route = `${method} ${path.replace(/\/+$/, '')}`;
  switch (route) {
    case 'GET /_control/stats':
      return json(200, emulator.stats());
    case 'POST /_control/stats/reset':
      emulator.resetStats();
      return { status: 204 };
    case 'PUT /_control/faults':
      emulator.setFaults(parse(FAULT_OPTIONS_SCHEMA, body ?? {}));
      return { status: 204 };
    case 'GET /_control/quirks':
      return json(200, emulator.quirks());
    case 'PUT /_control/quirks':
      emulator.setQuirks(parse(QUIRKS_SCHEMA, body ?? {}));
      return { status: 204 };
    case 'PUT /_control/clock':
      emulator.setNow(new Date(parse(CLOCK_SCHEMA, body).now));
      return { status: 204 };
    case 'POST /_control/override': {
      const o = parse(OVERRIDE_SCHEMA, body);
      emulator.override({ ...o, body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) });
      return { status: 204 };
    }
    default:
      throw new ApiError(404, 'not_found', `No control endpoint ${route}.`);
  }
}
