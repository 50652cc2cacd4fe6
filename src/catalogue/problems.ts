import type { ProblemSink } from './field-problem.js';
import type { FieldProblem, ProblemSummary } from '../warehouse/catalogue/rows.js';

/** Problems kept in full per sync; the rest are only counted (a broken field can hit every row). */
export const KEPT_PROBLEMS = 100;

/**
 * Collects the field problems of one sync. Bounded: every problem is counted, only the first
 * KEPT_PROBLEMS are kept, so a field the API changed for every entity cannot flood memory, the
 * log or Postgres. Pure; the sync logs and stores its summary once.
 */
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

  get count(): number {
    return this.total;
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
