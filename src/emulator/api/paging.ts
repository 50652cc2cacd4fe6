import { badRequest } from './errors.js';

/** The largest accepted `limit` under the strict quirk (the spec leaves it open; docs/emulator.md). */
export const MAX_LIMIT = 1000;

/** A validated list query: page size and items skipped. */
export interface PageParams {
  readonly limit: number;
  readonly offset: number;
}

function integerParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw badRequest(`${name} must be a whole number.`, name);
  const value = Number(raw);
  if (value < min || value > max) throw badRequest(`${name} must be from ${min} to ${max}.`, name);
  return value;
}

/**
 * The list query's limit (default 100; at least 1, at most MAX_LIMIT only when `strict`: without it a
 * page is a slice of what the emulator holds anyway, so no cap is needed) and offset (default 0).
 */
export function pageParams(query: URLSearchParams, strict: boolean): PageParams {
  return {
    limit: integerParam(query, 'limit', 100, 1, strict ? MAX_LIMIT : Number.MAX_SAFE_INTEGER),
    offset: integerParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** One page of `items`. */
export function page<T>(items: readonly T[], p: PageParams): { items: T[] } {
  return { items: items.slice(p.offset, p.offset + p.limit) };
}

/** A path id: decimal digits forming a positive safe integer, else 400 naming the parameter. */
export function pathId(raw: string | undefined, name: string): number {
  const value = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw badRequest(`${name} in the path must be a positive integer.`, name);
  return value;
}
