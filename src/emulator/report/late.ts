import { dayNumber } from './cells.js';

/**
 * How much of a day's final traffic has been reported, as an exact fraction num/den.
 * With a late-data window of N days and age a = today - day (UTC days, by the emulator clock):
 * a < 0 (future) reports nothing, a >= N is final, otherwise (a+1)/(N+1) of each counter, so
 * a re-pull of a recent day sees restated, larger numbers. Each counter is floored separately,
 * which keeps impressions <= filled <= requests and viewable <= measurable <= impressions.
 */
export function lateFraction(day: string, today: string, windowDays: number): { num: number; den: number } {
  const age = dayNumber(today) - dayNumber(day);
  if (age < 0) return { num: 0, den: 1 };
  if (age >= windowDays) return { num: 1, den: 1 };
  return { num: age + 1, den: windowDays + 1 };
}

/** The UTC calendar date (YYYY-MM-DD) of an instant. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Every date from `from` to `until`, both inclusive (YYYY-MM-DD). */
export function daysBetween(from: string, until: string): string[] {
  const out: string[] = [];
  const end = dayNumber(until);
  for (let d = dayNumber(from); d <= end; d++) out.push(new Date(d * 86_400_000).toISOString().slice(0, 10));
  return out;
}
