import type { EmulatorStats, FaultKind, OverrideOptions } from './types.js';

/** 'GET /v2/campaigns/123/creatives/456?x' -> 'GET /v2/campaigns/:id/creatives/:id'. */
export function endpointKey(method: string, path: string): string {
  const clean = path.split('?')[0] ?? '';
  const normalised = clean
    .split('/')
    .map((s) => (/^\d+$/.test(s) ? ':id' : s))
    .join('/')
    .replace(/\/+$/, '');
  return `${method.toUpperCase()} ${normalised === '' ? '/' : normalised}`;
}

/** Request and fault counters (see EmulatorStats). */
export class StatsCounter {
  private requests: Record<string, number> = {};
  private faults: Record<string, number> = {};

  request(endpoint: string): void {
    this.requests[endpoint] = (this.requests[endpoint] ?? 0) + 1;
  }

  /**
   * Counts a fault by kind, and by endpoint unless it only added latency or an echoed key (the
   * answer itself was normal).
   */
  fault(endpoint: string, kind: FaultKind): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
    if (kind !== 'latency' && kind !== 'echo_key') this.faults[endpoint] = (this.faults[endpoint] ?? 0) + 1;
  }

  snapshot(): EmulatorStats {
    return { requests: { ...this.requests }, faults: { ...this.faults } };
  }

  reset(): void {
    this.requests = {};
    this.faults = {};
  }
}

/** Canned answers queued by override(): first match by path prefix wins, each used `times` times. */
export class OverrideQueue {
  private readonly queue: (OverrideOptions & { left: number })[] = [];

  add(o: OverrideOptions): void {
    this.queue.push({ ...o, left: o.times ?? 1 });
  }

  /** The canned answer for this path, consuming one use, or undefined. */
  take(path: string): OverrideOptions | undefined {
    const i = this.queue.findIndex((o) => path.startsWith(o.path));
    if (i < 0) return undefined;
    const o = this.queue[i] as OverrideOptions & { left: number };
    o.left -= 1;
    if (o.left <= 0) this.queue.splice(i, 1);
    return o;
  }
}
