import { badRequest } from './errors.js';

/**
 * Field checkers for request bodies. Each returns the typed value or throws a 400 naming the
 * field. In `lenient` mode (the campaign update, whose spec example sends every value as a string)
 * string-encoded numbers, booleans, arrays and objects are decoded first.
 */
export interface Reader {
  readonly lenient: boolean;
  /** Fields outside a body's known list: ignored ('drop', the default) or a 400 ('reject'). */
  readonly unknownFields?: 'drop' | 'reject';
}

export type Json = Record<string, unknown>;

/** The request body as an object, or a 400. */
export function objectBody(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('The request body must be a JSON object.');
  return body as Json;
}

function decode(r: Reader, value: unknown): unknown {
  if (!r.lenient || typeof value !== 'string') return value;
  const t = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return value;
    }
  }
  return value;
}

/** A required (or, with `optional`, possibly absent) field's raw value. */
function field(obj: Json, name: string, path: string, optional: boolean): unknown {
  const value = obj[name];
  if (value === undefined && !optional) throw badRequest(`${path} is required.`, path);
  return value;
}

export function str(r: Reader, obj: Json, name: string, path = name, optional = false): string | undefined {
  const value = field(obj, name, path, optional);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${path} must be a string.`, path);
  return value;
}

/** A non-empty string field. */
export function text(r: Reader, obj: Json, name: string, path = name, optional = false): string | undefined {
  const value = str(r, obj, name, path, optional);
  if (value !== undefined && value.trim() === '') throw badRequest(`${path} must not be empty.`, path);
  return value;
}

export function int(
  r: Reader,
  obj: Json,
  name: string,
  path = name,
  options: { optional?: boolean; min?: number; max?: number } = {},
): number | undefined {
  const value = decode(r, field(obj, name, path, options.optional ?? false));
  if (value === undefined) return undefined;
  return checkInt(value, path, options.min, options.max);
}

/** An integer within [min, max], or a 400. */
export function checkInt(value: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw badRequest(`${path} must be an integer.`, path);
  if (value < min || value > max) throw badRequest(`${path} must be from ${min} to ${max}.`, path);
  return value;
}

export function bool(r: Reader, obj: Json, name: string, path = name, optional = false): boolean | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`${path} must be true or false.`, path);
  return value;
}

export function num(r: Reader, obj: Json, name: string, path = name, optional = false): number | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw badRequest(`${path} must be a number.`, path);
  return value;
}

export function oneOf<T extends string>(
  r: Reader,
  obj: Json,
  name: string,
  allowed: readonly T[],
  path = name,
  optional = false,
): T | undefined {
  const value = str(r, obj, name, path, optional);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw badRequest(`${path} must be one of: ${allowed.join(', ')}.`, path);
  return value as T;
}

export function array(
  r: Reader,
  obj: Json,
  name: string,
  path = name,
  optional = false,
): unknown[] | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw badRequest(`${path} must be an array.`, path);
  return value;
}

/**
 * An object field. `null` and `[]` (how reads show an unset object) return null, meaning "unset".
 */
export function object(
  r: Reader,
  obj: Json,
  name: string,
  path = name,
  optional = false,
): Json | null | undefined {
  const value = decode(r, field(obj, name, path, optional));
  if (value === undefined) return undefined;
  if (value === null || (Array.isArray(value) && value.length === 0)) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${path} must be an object.`, path);
  return value as Json;
}

/** With the reader's unknownFields 'reject', a 400 for the first field outside `allowed`; else nothing. */
export function knownFields(r: Reader, obj: Json, allowed: readonly string[], path?: string): void {
  if (r.unknownFields !== 'reject') return;
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) {
      const at = path === undefined ? key : `${path}.${key}`;
      throw badRequest(`${at} is not a known field.`, at);
    }
}

/** Rejects fields outside `allowed` (typos would otherwise be silently ignored). */
export function onlyFields(obj: Json, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) throw badRequest(`${path}.${key} is not a known field.`, `${path}.${key}`);
}
