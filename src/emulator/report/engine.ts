import type { SpecDimension as Dimension } from '../spec.js';
import { generateDay, type DayCells } from './cells.js';
import { daysBetween, lateFraction } from './late.js';
import { FAITHFUL_ENCODING, type ReportEncoding } from './encoding.js';
import { renderReport, type ReportedDay } from './render.js';
import type { TrafficModel } from './traffic.js';

export interface ReportEngineOptions {
  readonly seed: number;
  readonly cellsPerDay: number;
  readonly lateDataDays: number;
  /** Cells kept in the day cache; older days are regenerated (deterministically) when asked again. */
  readonly cacheCells?: number;
}

/** Serves report bodies: per-day cells from (seed, day), cached, then late-data scaled and grouped. */
export class ReportEngine {
  private readonly cache = new Map<string, DayCells>();
  private cached = 0;

  constructor(
    private readonly model: TrafficModel,
    private readonly options: ReportEngineOptions,
  ) {}

  /** The final cells of a day (from the cache when recent). */
  day(day: string): DayCells {
    const hit = this.cache.get(day);
    if (hit !== undefined) {
      // Re-insert so the Map's order is least recently used first.
      this.cache.delete(day);
      this.cache.set(day, hit);
      return hit;
    }
    const cells = generateDay(this.model, this.options.seed, day, this.options.cellsPerDay);
    const budget = this.options.cacheCells ?? Math.max(4_000_000, this.options.cellsPerDay);
    while (this.cached + cells.count > budget && this.cache.size > 0) {
      const [oldest, old] = this.cache.entries().next().value as [string, DayCells];
      this.cache.delete(oldest);
      this.cached -= old.count;
    }
    this.cache.set(day, cells);
    this.cached += cells.count;
    return cells;
  }

  /** Every day of the range with the share of its traffic reported as of `today`. */
  reportedDays(from: string, until: string, today: string): ReportedDay[] {
    return daysBetween(from, until).map((d) => {
      const { num, den } = lateFraction(d, today, this.options.lateDataDays);
      // A future day reports nothing: skip generating its cells at all.
      const cells = num === 0 ? generateDay(this.model, this.options.seed, d, 0) : this.day(d);
      return { cells, num, den };
    });
  }

  /** The response body of GET /reports as string chunks, written in `encoding` (the quirks). */
  render(
    from: string,
    until: string,
    dimensions: readonly Dimension[],
    today: string,
    encoding: ReportEncoding = FAITHFUL_ENCODING,
  ): Generator<string> {
    return renderReport(this.model, this.reportedDays(from, until, today), dimensions, encoding);
  }
}
