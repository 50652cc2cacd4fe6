import type { Quirks } from '../quirks.js';
import type { Reply } from './http.js';

/** The quirks that change how entity reads are encoded. */
export type EntityEncoding = Pick<Quirks, 'stringValues' | 'emptyAsArray' | 'sortKeys'>;

/** How an entity's booleans are written under stringValues. */
type BoolForm = 'digit' | 'word';

/**
 * JSON text of an entity read, listing or create answer as the quirks encode it: numbers as strings
 * of digits and booleans as "1"/"0" or "true"/"false" (stringValues; the form alternates by the
 * entity's id parity, so a listing carries both), empty or unset objects as [] (emptyAsArray),
 * object keys in alphabetical order (sortKeys). Without any of them, plain JSON.stringify.
 */
export function encodeEntities(value: unknown, q: EntityEncoding): string {
  if (!q.stringValues && !q.emptyAsArray && !q.sortKeys) return JSON.stringify(value);
  return JSON.stringify(transform(value, q, 'word', undefined));
}

/** A JSON reply of an entity read (or listing, or create answer) under the quirks. */
export function entityReply(status: number, value: unknown, q: EntityEncoding): Reply {
  return { status, body: encodeEntities(value, q) };
}

function transform(value: unknown, q: EntityEncoding, form: BoolForm, key: string | undefined): unknown {
  if (typeof value === 'number') return q.stringValues ? String(value) : value;
  if (typeof value === 'boolean') {
    if (!q.stringValues) return value;
    return form === 'digit' ? (value ? '1' : '0') : String(value);
  }
  if (Array.isArray(value)) return value.map((v) => transform(v, q, form, undefined));
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  if (q.emptyAsArray && isUnset(obj, key)) return [];
  const own = boolFormOf(obj) ?? form;
  const keys = Object.keys(obj);
  if (q.sortKeys) keys.sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = transform(obj[k], q, own, k);
  return out;
}

/** An entity's boolean form, from the parity of its own id; undefined for anything else. */
function boolFormOf(obj: Record<string, unknown>): BoolForm | undefined {
  const id = obj.creative_id ?? obj.campaign_id;
  return typeof id === 'number' ? (id % 2 === 1 ? 'digit' : 'word') : undefined;
}

/** An empty object, or a delivery window without bounds (start and end 0: what an unset one reads as). */
function isUnset(obj: Record<string, unknown>, key: string | undefined): boolean {
  const keys = Object.keys(obj);
  if (keys.length === 0) return true;
  return key === 'delivery' && keys.length === 2 && obj.start === 0 && obj.end === 0;
}
