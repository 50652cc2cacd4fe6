import { z } from 'zod';
import { createRng, mixSeed, type Rng } from './prng.js';
import type { FaultOptions } from './types.js';

/** What the fault plan decided for one request. */
export interface FaultDecision {
  readonly kind:
    'none' | 'fail' | 'rate_limit' | 'storm' | 'drop' | 'drop_mid_body' | 'malformed' | 'truncate' | 'drip';
  readonly latencyMs: number;
  /** For a 'fail': whether it is one of the htmlShare that the htmlErrors quirk sends as an HTML 502 page. */
  readonly html?: boolean;
}

const rate = z.number().min(0).max(1);
/** Added latency: at most an hour, well inside what a Node timer holds. */
const latency = z.number().min(0).max(3_600_000, 'at most 3600000 ms (an hour)');
/** The accepted shape of FaultOptions (flags and PUT /_control/faults). */
export const FAULT_OPTIONS_SCHEMA = z
  .object({
    failRate: rate.optional(),
    rateLimitRate: rate.optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    dropRate: rate.optional(),
    malformedRate: rate.optional(),
    truncateRate: rate.optional(),
    latencyMs: z.union([latency, z.tuple([latency, latency])]).optional(),
    paths: z.array(z.string()).optional(),
    seed: z.number().int().optional(),
    rateLimitStormRate: rate.optional(),
    rateLimitStormLength: z.number().int().min(1).max(10_000).optional(),
    dropMidBodyRate: rate.optional(),
    htmlShare: rate.optional(),
    dripRate: rate.optional(),
    dripIntervalMs: z.number().int().min(1).max(600_000).optional(),
  })
  .strict()
  .refine(
    (f) =>
      (f.failRate ?? 0) +
        (f.rateLimitRate ?? 0) +
        (f.dropRate ?? 0) +
        (f.malformedRate ?? 0) +
        (f.truncateRate ?? 0) +
        (f.rateLimitStormRate ?? 0) +
        (f.dropMidBodyRate ?? 0) +
        (f.dripRate ?? 0) <=
      1,
    'the fault rates must add up to at most 1',
  );

/**
 * Seeded fault injection: every request under the fault paths draws exactly two numbers, so the
 * same seed and the same request sequence give the same faults. Replacing the options restarts
 * the sequence. A storm answers its starting request and the next `rateLimitStormLength - 1`
 * requests under the fault paths with 429 (they still draw, so the sequence stays aligned).
 */
export class FaultPlan {
  private options: FaultOptions = {};
  private rng: Rng = createRng(1);
  private stormLeft = 0;

  constructor(options: FaultOptions = {}) {
    this.set(options);
  }

  /** Replaces the faults (validated; throws on bad options) and restarts the seeded sequence. */
  set(options: FaultOptions): void {
    this.options = FAULT_OPTIONS_SCHEMA.parse(options);
    this.rng = createRng(mixSeed(options.seed ?? 1, 0xfa17));
    this.stormLeft = 0;
  }

  get current(): FaultOptions {
    return this.options;
  }

  /** Milliseconds between the bytes of a dripping body (default 2000). */
  get dripIntervalMs(): number {
    return this.options.dripIntervalMs ?? 2_000;
  }

  /** Retry-After seconds of injected 429s. */
  get retryAfterSeconds(): number {
    return this.options.retryAfterSeconds ?? 1;
  }

  /** The fault (if any) and latency for a request to `path`. */
  decide(path: string): FaultDecision {
    const o = this.options;
    const paths = o.paths ?? ['/v2'];
    if (!paths.some((p) => path.startsWith(p))) return { kind: 'none', latencyMs: 0 };
    const u = this.rng.next();
    const l = this.rng.next();
    const latency =
      o.latencyMs === undefined
        ? 0
        : typeof o.latencyMs === 'number'
          ? o.latencyMs
          : o.latencyMs[0] + l * (o.latencyMs[1] - o.latencyMs[0]);
    const latencyMs = Math.round(latency);
    if (this.stormLeft > 0) {
      this.stormLeft -= 1;
      return { kind: 'storm', latencyMs };
    }
    const bands: [FaultDecision['kind'], number | undefined][] = [
      ['drop', o.dropRate],
      ['fail', o.failRate],
      ['rate_limit', o.rateLimitRate],
      ['malformed', o.malformedRate],
      ['truncate', o.truncateRate],
      ['storm', o.rateLimitStormRate],
      ['drop_mid_body', o.dropMidBodyRate],
      ['drip', o.dripRate],
    ];
    let edge = 0;
    for (const [kind, r] of bands) {
      const width = r ?? 0;
      edge += width;
      if (u >= edge) continue;
      if (kind === 'storm') this.stormLeft = (o.rateLimitStormLength ?? 5) - 1;
      // Where u falls inside the fail band decides HTML or JSON, so no extra draw is needed.
      if (kind === 'fail')
        return { kind, latencyMs, html: (u - (edge - width)) / width < (o.htmlShare ?? 1) };
      return { kind, latencyMs };
    }
    return { kind: 'none', latencyMs };
  }
}

/** Parses a `--latency-ms` flag: 'A' or 'A-B' milliseconds. */
export function parseLatency(text: string): number | [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (m === null) throw new Error(`latency "${text}" must be milliseconds: A or A-B, e.g. 50 or 20-200`);
  const a = Number(m[1]);
  if (m[2] === undefined) return a;
  const b = Number(m[2]);
  if (b < a) throw new Error(`latency "${text}": B must not be below A`);
  return [a, b];
}
