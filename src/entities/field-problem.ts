import type { EntityKind, FieldProblem } from '../warehouse/entities/rows.js';

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

/** One line naming entity, id, field, value and expectation, for logs and `adops status`. */
export function problemText(p: FieldProblem): string {
  return `${p.entity} ${p.id ?? '(unreadable id)'}: field ${p.field} is ${p.value}, expected ${p.expected}`;
}

/** A value as a short excerpt with its JSON type: `"2.5x" (string)`, `missing`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${shown} (${type})`;
}
