import type { Scope } from '../types.js';
import { ApiError, notFound } from './errors.js';
import type { Handler } from './http.js';

/** A matched /v2 route: its handler, the key scope it needs, and the id segments of the path. */
export interface Route {
  readonly handler: Handler;
  readonly scope: Scope;
  readonly ids: string[];
}

/**
 * Matches a path below /v2 ('/campaigns/12/creatives') against the handler patterns
 * ('GET /campaigns/:id/creatives'). Unknown paths are 404; known paths with another method 405.
 */
export function matchRoute(handlers: Record<string, Handler>, method: string, subPath: string): Route {
  const segments = subPath.split('/').filter((s) => s !== '');
  const allowed: string[] = [];
  for (const [pattern, handler] of Object.entries(handlers)) {
    const [m, p] = pattern.split(' ') as [string, string];
    const parts = p.split('/').filter((s) => s !== '');
    if (parts.length !== segments.length) continue;
    const ids: string[] = [];
    const matches = parts.every((part, i) => {
      if (part === ':id') {
        ids.push(segments[i] ?? '');
        return true;
      }
      return part === segments[i];
    });
    if (!matches) continue;
    if (m !== method) {
      allowed.push(m);
      continue;
    }
    const scope: Scope =
      segments[0] === 'reports' ? 'reports' : segments.length >= 3 ? 'creatives' : 'campaigns';
    return { handler, scope, ids };
  }
  if (allowed.length > 0) {
    const error = new ApiError(405, 'method_not_allowed', `Use one of: ${allowed.join(', ')}.`);
    throw Object.assign(error, { allow: allowed.join(', ') });
  }
  throw notFound(`No endpoint ${method} /v2${subPath}.`);
}
