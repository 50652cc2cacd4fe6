import { z } from 'zod';
import { ApiError, badRequest } from './api/errors.js';
import { json, type Reply } from './api/http.js';
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

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw badRequest(
    `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
    issue?.path.join('.'),
  );
}

/**
 * The control endpoints outside /v2 (no auth): GET /_control/stats, POST /_control/stats/reset,
 * PUT /_control/faults, PUT /_control/clock, POST /_control/override.
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
      try {
        emulator.setFaults((body ?? {}) as Record<string, unknown>);
      } catch (error) {
        if (error instanceof z.ZodError)
          throw badRequest(
            `faults: ${error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
          );
        throw error;
      }
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
