// Durations as job definitions write them: a whole number and a unit, like 90m, 30h or 2d.

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** The longest duration accepted: a year and a day. */
const MAX_MS = 366 * UNIT_MS.d;

/** Milliseconds of `text` (`90m`, `30h`, `2d`), or undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^([1-9]\d{0,5})([mhd])$/.exec(text.trim());
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms <= MAX_MS ? ms : undefined;
}

/** A duration for messages, in hours up to three days and in days beyond (`30h`, `8d`, `1.5h`). */
export function formatDuration(ms: number): string {
  if (ms >= 3 * UNIT_MS.d && ms % UNIT_MS.d === 0) return `${ms / UNIT_MS.d}d`;
  if (ms >= 3 * UNIT_MS.d) return `${(ms / UNIT_MS.d).toFixed(1)}d`;
  const hours = ms / UNIT_MS.h;
  return Number.isInteger(hours) ? `${hours}h` : `${hours.toFixed(1)}h`;
}
