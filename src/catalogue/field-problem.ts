import type { EntityKind, FieldProblem } from '../warehouse/catalogue/rows.js';
import { storableText } from '../warehouse/catalogue/storable.js';

/** Where field readers report the problems they meet. */
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

/** A text field (or key) at `field` that was stored repaired: `value` is what the API sent. */
export function repairedText(entity: EntityKind, id: number, field: string, value: unknown): FieldProblem {
  return { ...fieldProblem(entity, id, field, REPAIRED_TEXT, value), repaired: true };
}

/** One line naming entity, id, field, value and expectation, for logs and `adops status`. */
export function problemText(p: FieldProblem): string {
  return `${p.entity} ${p.id ?? '(unreadable id)'}: field ${p.field} is ${p.value}, expected ${p.expected}`;
}

/** A value as a short excerpt with its JSON type: `"2.5x" (string)`, `missing`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  // Storable too: the problems are kept in jsonb, and a cut can split a surrogate pair.
  const shown = storableText(text.length > 60 ? `${text.slice(0, 57)}...` : text);
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${shown} (${type})`;
}
