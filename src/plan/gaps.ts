// Which periods need a pull: pure planning over what the warehouse says was loaded.
import type { Period } from '../flatten/types.js';
import { periodKey } from '../dates/periods.js';

/** What the warehouse knows of one period of one report (its last pull attempt). */
export interface PeriodState {
  readonly start: string;
  readonly end: string;
  readonly lastStatus: 'loaded' | 'failed' | 'superseded';
  /** Rows of the last successful load, when known. */
  readonly rows: number | null;
  readonly lastLoadedAt: Date | null;
  /** The reason of the last failure, when the last attempt failed. */
  readonly error: string | null;
}

/**
 * The periods of `expected` that need a pull: no attempt on record, or the last attempt failed.
 * A superseded attempt lost to a newer load of the same period, so it counts as loaded. (A load
 * refused because its table version was retired never reaches here: the states are of the serving
 * version's loads only.)
 */
export function periodsToHeal(expected: readonly Period[], states: readonly PeriodState[]): Period[] {
  const byKey = new Map(states.map((s) => [periodKey(s), s]));
  return expected.filter((p) => {
    const s = byKey.get(periodKey(p));
    return s === undefined || s.lastStatus === 'failed';
  });
}

/**
 * The pulls of one scheduler tick: every window period (pulled again even when loaded, for late
 * data), then gap repairs not already in the window, newest first, at most `gapCap` of them so a
 * long outage heals over several nights instead of flooding one.
 */
export function tickPlan(
  window: readonly Period[],
  gaps: readonly Period[],
  gapCap: number,
): { window: Period[]; gaps: Period[] } {
  const inWindow = new Set(window.map(periodKey));
  const extra = gaps
    .filter((p) => !inWindow.has(periodKey(p)))
    .sort((a, b) => (a.start < b.start ? 1 : a.start > b.start ? -1 : 0))
    .slice(0, Math.max(0, gapCap));
  return { window: [...window], gaps: extra };
}

/**
 * Loaded periods that came back with zero rows while a loaded neighbour (the nearest loaded period
 * before or after) did not: a sign of an outage on the API's side rather than a quiet day.
 */
export function zeroRowOutliers(states: readonly PeriodState[]): PeriodState[] {
  const loaded = states
    .filter((s) => s.lastStatus !== 'failed' && s.rows !== null)
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return loaded.filter((s, i) => {
    if (s.rows !== 0) return false;
    const before = loaded[i - 1];
    const after = loaded[i + 1];
    return (before?.rows ?? 0) > 0 || (after?.rows ?? 0) > 0;
  });
}
