// Reading the API's entity fields defensively: an unreadable field becomes NULL and a reported problem.
import {
  type EntityKind,
  type FieldProblem,
  type JsonObject,
  type ProblemSummary,
  storableJson,
  storableText,
} from './stored-rows.js';

export interface ProblemSink {
  add(problem: FieldProblem): void;
}

/** A problem for `value` at `field` (the value shortened to an excerpt). */
export function fieldProblem(
  entity: EntityKind,
  id: number | null,
  field: string,
  expected: string,
  value: unknown,
): FieldProblem {
  return { entity, id, field, expected, value: describeValue(value) };
}

/** What a repaired text field says it expected, and what was stored instead. */
export const REPAIRED_TEXT =
  'text without NUL characters or unpaired surrogates (stored with the NULs removed and U+FFFD for each unpaired surrogate)';

/** One line naming entity, id, field, value and expectation, for logs and `adops status`. */
export function problemText(p: FieldProblem): string {
  return `${p.entity} ${p.id ?? '(unreadable id)'}: field ${p.field} is ${p.value}, expected ${p.expected}`;
}

/** A value as a short excerpt with its JSON type: `"2.5x" (string)`, `missing`. */
function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  // Storable too: the problems are kept in jsonb, and a cut can split a surrogate pair.
  const shown = storableText(text.length > 60 ? `${text.slice(0, 57)}...` : text);
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${shown} (${type})`;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const INT_TEXT = /^-?\d{1,16}$/;
const DECIMAL_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** A whole number from a number or a string of digits ("123", as PHP-style APIs send ids); else undefined. */
export function asInt(v: unknown): number | undefined {
  const n = typeof v === 'string' && INT_TEXT.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
}

/** A finite number from a number or a decimal string ("2.5"); undefined otherwise. */
export function asNum(v: unknown): number | undefined {
  const n = typeof v === 'string' && DECIMAL_TEXT.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

const TRUE: ReadonlySet<unknown> = new Set([true, 1, '1', 'true']);
const FALSE: ReadonlySet<unknown> = new Set([false, 0, '0', 'false']);

/** A boolean from true/false, 1/0, "1"/"0" or "true"/"false"; undefined otherwise. */
export function asBool(v: unknown): boolean | undefined {
  return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
}

/** Typed reads of an entity's fields: unreadable ones as null (reported), strings as numbers or booleans when
 * they are: one bad field costs no entity. */
export class FieldReader {
  constructor(
    readonly entity: EntityKind,
    readonly id: number,
    private readonly problems: ProblemSink,
  ) {}

  private bad(field: string, expected: string, value: unknown): null {
    this.problems.add(fieldProblem(this.entity, this.id, field, expected, value));
    return null;
  }

  private read<T>(
    obj: JsonObject,
    key: string,
    path: string,
    expected: string,
    parse: (v: unknown) => T | undefined,
  ): T | null {
    const v = obj[key];
    if (v === undefined || v === null) return null;
    const read = parse(v);
    return read === undefined ? this.bad(path, expected, v) : read;
  }

  /** A whole number that fits a JavaScript number exactly (ids are 9+ digits), optionally in a range. */
  int(obj: JsonObject, key: string, path = key, range?: { min: number; max: number }): number | null {
    const expected = range === undefined ? 'an integer' : `an integer from ${range.min} to ${range.max}`;
    return this.read(obj, key, path, expected, (v) => {
      const n = asInt(v);
      return n === undefined || (range !== undefined && (n < range.min || n > range.max)) ? undefined : n;
    });
  }

  num(obj: JsonObject, key: string, path = key): number | null {
    return this.read(obj, key, path, 'a number', asNum);
  }

  str(obj: JsonObject, key: string, path = key): string | null {
    return this.read(obj, key, path, 'a string', (v) => (typeof v === 'string' ? v : undefined));
  }

  bool(obj: JsonObject, key: string, path = key): boolean | null {
    return this.read(obj, key, path, 'a boolean (or 1/0, "true"/"false")', asBool);
  }

  /** UNIX seconds as an ISO instant; 0 (start immediately, no end, never) is null. */
  time(obj: JsonObject, key: string, path = key): string | null {
    const v = this.int(obj, key, path);
    if (v === null || v === 0) return null;
    if (v < 0 || v > 253_402_300_799) return this.bad(path, 'UNIX seconds from 1970 to 9999', obj[key]);
    return new Date(v * 1000).toISOString();
  }

  /** An object the API sends as `[]` when unset (pricing, pacing, delivery); `[]` reads as null. */
  objectOrUnset(obj: JsonObject, key: string, path = key): JsonObject | null {
    return this.read(obj, key, path, 'an object, or [] when unset', (v) =>
      Array.isArray(v) && v.length === 0 ? null : isObject(v) ? v : undefined,
    );
  }

  /** A jsonb value the API sends as `[]` when unset (targeting: "array or object"); `[]` reads as null. */
  jsonOrUnset(obj: JsonObject, key: string, path = key): JsonObject | unknown[] | null {
    return this.read(obj, key, path, 'an object or an array', (v) =>
      Array.isArray(v) ? (v.length === 0 ? null : v) : isObject(v) ? v : undefined,
    );
  }

  /** A list of ids (zone_ids, creative_ids); an element that is not an integer is left out. */
  intList(obj: JsonObject, key: string, path = key): number[] {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.bad(path, 'an array of integers', v);
      return [];
    }
    const out: number[] = [];
    v.forEach((item, i) => {
      const n = asInt(item);
      if (n === undefined) this.bad(`${path}[${i}]`, 'an integer', item);
      else out.push(n);
    });
    return out;
  }
}

export const SMALLINT = { min: -32_768, max: 32_767 } as const;
export const INTEGER = { min: -2_147_483_648, max: 2_147_483_647 } as const;

/** The entity with its text storable, each repair reported: typed columns and `raw` hold the same text. */
export function storableEntity(
  entity: EntityKind,
  id: number,
  obj: JsonObject,
  problems: ProblemSink,
): JsonObject {
  const stored = storableJson(obj, (path, original) =>
    problems.add({ ...fieldProblem(entity, id, path, REPAIRED_TEXT, original), repaired: true }),
  );
  return isObject(stored) ? stored : obj; // always an object: storableJson keeps an object one
}

/** The positive integer id of an entity, or undefined (reported): the entity cannot be keyed. */
export function readId(
  entity: EntityKind,
  obj: unknown,
  key: string,
  problems: ProblemSink,
): number | undefined {
  if (!isObject(obj)) {
    problems.add(fieldProblem(entity, null, '(object)', 'a JSON object', obj));
    return undefined;
  }
  const id = asInt(obj[key]);
  if (id !== undefined && id > 0) return id;
  problems.add(fieldProblem(entity, null, key, 'a positive integer id', obj[key]));
  return undefined;
}

/** Problems kept in full per sync; the rest are only counted. */
export const KEPT_PROBLEMS = 100;

/** The field problems of one sync: all counted, the first KEPT_PROBLEMS kept, so nothing floods. */
export class ProblemLog implements ProblemSink {
  private readonly kept: FieldProblem[] = [];
  private readonly fields = new Map<string, number>();
  private total = 0;
  private skips = 0;
  private repairs = 0;

  add(problem: FieldProblem): void {
    this.total++;
    if (problem.id === null) this.skips++;
    if (problem.repaired === true) this.repairs++;
    const key = `${problem.entity} ${problem.field.replace(/\[\d+\]/g, '[]')}`;
    this.fields.set(key, (this.fields.get(key) ?? 0) + 1);
    if (this.kept.length < KEPT_PROBLEMS) this.kept.push(problem);
  }

  summary(): ProblemSummary {
    const byField = Object.fromEntries(
      [...this.fields].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
    );
    return {
      count: this.total,
      skipped: this.skips,
      repaired: this.repairs,
      byField,
      examples: [...this.kept],
    };
  }
}
