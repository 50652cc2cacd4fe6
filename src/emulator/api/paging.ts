import { badRequest } from './errors.js';

/** The largest accepted `limit` (the spec leaves it open; documented in docs/emulator.md). */
export const MAX_LIMIT = 1000;

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

/** One page of `items` by the list query's limit (default 100, 1..1000) and offset (default 0). */
export function page<T>(items: readonly T[], query: URLSearchParams): { items: T[] } {
  const limit = integerParam(query, 'limit', 100, 1, MAX_LIMIT);
  const offset = integerParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  return { items: items.slice(offset, offset + limit) };
}

/** A path id: decimal digits forming a positive safe integer, else 400 naming the parameter. */
export function pathId(raw: string | undefined, name: string): number {
  const value = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw badRequest(`${name} in the path must be a positive integer.`, name);
  return value;
}
