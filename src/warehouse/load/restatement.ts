// How much a period's totals changed between two loads: the evidence for sizing lookback_days.
// Pure: computing and summarizing restatements needs no database.
import { COUNTERS, type CounterName, type Counters, type Totals } from '../../flatten/types.js';

/**
 * Per counter: the previous load's total and how much the new load changed it. A load without
 * that total (the API gave none) makes them null: no change can be measured.
 */
export type Restatement = Record<CounterName, { previous: number | null; delta: number | null }>;

/** The change of each total from `previous` to `current` (null where either lacks the total). */
export function restatementOf(previous: Totals, current: Totals): Restatement {
  const out = {} as Restatement;
  for (const c of COUNTERS) {
    const before = previous[c];
    const now = current[c];
    out[c] = { previous: before, delta: before === null || now === null ? null : now - before };
  }
  return out;
}

/** True when any total measurably changed. */
export function isRestated(r: Restatement): boolean {
  return COUNTERS.some((c) => r[c].delta !== null && r[c].delta !== 0);
}

/**
 * The largest relative change of any counter's total: |delta| / previous (1 when only the previous
 * total was 0, 0 when nothing changed or nothing could be measured).
 */
export function maxRelativeChange(r: Restatement): number {
  let max = 0;
  for (const c of COUNTERS) {
    const { previous, delta } = r[c];
    if (previous === null || delta === null || delta === 0) continue;
    const rel = previous === 0 ? 1 : Math.abs(delta) / previous;
    if (rel > max) max = rel;
  }
  return max;
}

/** One reload of a period: its age when re-fetched and what changed. */
export interface RestatementSample {
  readonly report: string;
  /** Whole days from the period's last day to the fetch of the reload. */
  readonly ageDays: number;
  readonly restatement: Restatement;
}

/** Reloads of one report's periods at one age, summarized. */
export interface RestatementSummary {
  readonly report: string;
  readonly age_days: number;
  /** Reloads of periods at this age. */
  readonly loads: number;
  /** Of those, how many changed any total. */
  readonly restated: number;
  /** Mean of |delta| per counter, over the reloads that could measure it (0 when none could). */
  readonly avg_abs_change: Counters;
  /** Largest |delta| / previous over all counters and loads (0 when previous was 0 and delta 0, 1 when only previous was 0). */
  readonly max_rel_change: number;
}

/** Groups reloads by report and age, sorted by report then age. */
export function summarizeRestatements(samples: Iterable<RestatementSample>): RestatementSummary[] {
  const groups = new Map<string, { report: string; age: number; items: Restatement[] }>();
  for (const s of samples) {
    const key = `${s.report}\u0000${s.ageDays}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { report: s.report, age: s.ageDays, items: [] }));
    g.items.push(s.restatement);
  }
  return [...groups.values()]
    .sort((a, b) => (a.report === b.report ? a.age - b.age : a.report < b.report ? -1 : 1))
    .map((g) => {
      const avg = {} as Counters;
      for (const c of COUNTERS) {
        let sum = 0;
        let measured = 0;
        for (const r of g.items) {
          const { previous, delta } = r[c];
          if (previous === null || delta === null) continue;
          measured++;
          sum += Math.abs(delta);
        }
        avg[c] = measured === 0 ? 0 : sum / measured;
      }
      const maxRel = Math.max(0, ...g.items.map(maxRelativeChange));
      return {
        report: g.report,
        age_days: g.age,
        loads: g.items.length,
        restated: g.items.filter(isRestated).length,
        avg_abs_change: avg,
        max_rel_change: maxRel,
      };
    });
}
