import { EntityFieldError, type EntityKind } from './errors.js';

/** A JSON object as parsed from an API response. */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Typed reads of one entity's fields. Missing and null read as null (the spec marks no read field
 * as always present, and a later API version may drop some); a value of another type throws an
 * EntityFieldError naming entity, id and field.
 */
export class FieldReader {
  constructor(
    readonly entity: EntityKind,
    readonly id: number | undefined,
  ) {}

  private fail(field: string, expected: string, value: unknown): never {
    throw new EntityFieldError(this.entity, this.id, field, expected, value);
  }

  /** A whole number that fits a JavaScript number exactly (ids are 9+ digits). */
  int(obj: JsonObject, key: string, path = key, range?: { min: number; max: number }): number | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    const expected = range === undefined ? 'an integer' : `an integer from ${range.min} to ${range.max}`;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) this.fail(path, expected, v);
    if (range !== undefined && (v < range.min || v > range.max)) this.fail(path, expected, v);
    return v;
  }

  /** A finite number (pricing value is a float). */
  num(obj: JsonObject, key: string, path = key): number | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(path, 'a number', v);
    return v;
  }

  str(obj: JsonObject, key: string, path = key): string | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') this.fail(path, 'a string', v);
    // Postgres text cannot hold NUL; refusing is better than silently altering the value.
    if (v.includes('\u0000')) this.fail(path, 'a string without NUL characters', v);
    return v;
  }

  bool(obj: JsonObject, key: string, path = key): boolean | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'boolean') this.fail(path, 'a boolean', v);
    return v;
  }

  /** UNIX seconds as an ISO instant; 0 (start immediately, no end, never) is null. */
  time(obj: JsonObject, key: string, path = key): string | null {
    const v = this.int(obj, key, path);
    if (v === null || v === 0) return null;
    if (v < 0 || v > 253_402_300_799) this.fail(path, 'UNIX seconds from 1970 to 9999', v);
    return new Date(v * 1000).toISOString();
  }

  /**
   * An object that the API sends as `[]` when unset (pricing, pacing, targeting, delivery):
   * `[]`, missing and null read as null; any other array or scalar is a type error.
   */
  objectOrUnset(obj: JsonObject, key: string, path = key): JsonObject | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    if (Array.isArray(v) && v.length === 0) return null;
    if (!isObject(v)) this.fail(path, 'an object, or [] when unset', v);
    return v;
  }

  /**
   * A JSON value stored as jsonb that the API sends as `[]` when unset (targeting: "array or
   * object"): `[]`, missing and null read as null; a non-empty array or an object is kept.
   */
  jsonOrUnset(obj: JsonObject, key: string, path = key): JsonObject | unknown[] | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    if (Array.isArray(v)) return v.length === 0 ? null : v;
    if (!isObject(v)) this.fail(path, 'an object or an array', v);
    return v;
  }

  /** A list of ids (zone_ids, creative_ids). */
  intList(obj: JsonObject, key: string, path = key): number[] {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) this.fail(path, 'an array of integers', v);
    return v.map((item, i) => {
      if (typeof item !== 'number' || !Number.isSafeInteger(item))
        this.fail(`${path}[${i}]`, 'an integer', item);
      return item;
    });
  }
}

/** Value ranges of the Postgres integer column types. */
export const SMALLINT = { min: -32_768, max: 32_767 } as const;
export const INTEGER = { min: -2_147_483_648, max: 2_147_483_647 } as const;

/** Reads the positive integer id of an entity, failing with a message that names the entity. */
export function readId(entity: EntityKind, obj: unknown, key: string): number {
  if (!isObject(obj)) throw new EntityFieldError(entity, undefined, '(object)', 'a JSON object', obj);
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
    throw new EntityFieldError(entity, undefined, key, 'a positive integer id', v);
  return v;
}
