// When a request of several periods is too much for its server: which failures a smaller request may not
// meet, and the request size (in days) that worked for an account and report, kept for the worker's life.
import { ApiError } from '../api/errors.js';
import { daysBetween } from '../platform/dates/calendar.js';
import type { Period } from '../flatten/types.js';

/** A failure a request of fewer days may not meet: a timeout, a 5xx after the retries, 413, a 400 about
 * the dates (the range too long), a body over ADOPS_MAX_BODY_MB. Never 401, 403, 404, 429 or a 400 about
 * anything else (an unknown dimension): no smaller request mends those. */
export function splittable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (/body larger than/.test(e.message)) return true;
    if (!(e instanceof ApiError)) continue;
    const { status } = e;
    if (status === 413 || (status !== undefined && status >= 500)) return true;
    const said = e.apiMessage ?? '';
    if (status === 400)
      return (
        /\b(date|dates|days?|range|period|span)\b|date_(from|until)/i.test(said) && !/dimension/i.test(said)
      );
    return e.name === 'ApiTransportError' && /TIMEOUT|DEADLINE/.test(e.code ?? '');
  }
  return false;
}

/** Calendar days from a request's first period's start to its last one's end. */
export const spanDays = (periods: readonly Period[]): number =>
  daysBetween(periods[0]?.start ?? '', periods.at(-1)?.end ?? '') + 1;

/** Per account and report, the longest request that worked below the shortest that failed and split: the
 * next requests of this worker start there instead of failing again. A server that got stricter is met
 * by the next split; one that got laxer is found again only by a new worker. */
export class RequestSizes {
  private readonly failed = new Map<string, number>();
  private readonly worked = new Map<string, number>();

  /** Days the requests of `key` start at (Infinity: as many as the job asks). */
  start(key: string): number {
    return this.worked.get(key) ?? Infinity;
  }

  split(key: string, days: number): void {
    if (days < (this.failed.get(key) ?? Infinity)) this.failed.set(key, days);
    if ((this.worked.get(key) ?? 0) >= days) this.worked.delete(key);
  }

  succeeded(key: string, days: number): void {
    const failed = this.failed.get(key);
    if (failed !== undefined && days < failed && days > (this.worked.get(key) ?? 0))
      this.worked.set(key, days);
  }
}

/** `periods` cut into runs spanning at most `days` days, each at least one period. */
export function inSpans(periods: readonly Period[], days: number): Period[][] {
  const out: Period[][] = [];
  for (const p of periods) {
    const run = out.at(-1);
    if (run !== undefined && spanDays([...run, p]) <= days) run.push(p);
    else out.push([p]);
  }
  return out;
}
