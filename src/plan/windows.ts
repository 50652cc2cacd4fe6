// The windows a scheduler tick and heal watch, over the date module (src/dates). Time zones enter
// only where a clock instant becomes a date.
import { addDays, localDate } from '../dates/calendar.js';
import {
  periodContaining,
  periodsBetween,
  previousPeriod,
  type Period,
  type PeriodUnit,
} from '../dates/periods.js';

/**
 * The periods a scheduler tick pulls: the period holding "yesterday" (in `timezone`, as of the
 * tick's scheduled instant, not whenever a worker gets to it) and the `lookback` periods before it,
 * which are pulled again for late data. Oldest first; lookback + 1 periods.
 */
export function scheduledWindow(tick: Date, timezone: string, unit: PeriodUnit, lookback: number): Period[] {
  let p = periodContaining(addDays(localDate(tick, timezone), -1), unit);
  const out: Period[] = [p];
  for (let i = 0; i < lookback; i++) {
    p = previousPeriod(p, unit);
    out.unshift(p);
  }
  return out;
}

/**
 * The periods heal and the scheduler's gap repair watch: every period overlapping the last `days`
 * days before today (in `timezone`), up to and including yesterday's. Oldest first.
 */
export function healWindow(now: Date, timezone: string, unit: PeriodUnit, days: number): Period[] {
  const today = localDate(now, timezone);
  return periodsBetween(addDays(today, -Math.max(1, days)), addDays(today, -1), unit);
}
