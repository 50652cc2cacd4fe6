import { z } from 'zod';
import { createRng, mixSeed, type Rng } from './prng.js';
import type { FaultOptions } from './types.js';

/** What the fault plan decided for one request. */
export interface FaultDecision {
  readonly kind: 'none' | 'fail' | 'rate_limit' | 'drop' | 'malformed' | 'truncate';
  readonly latencyMs: number;
}

const rate = z.number().min(0).max(1);
/** The accepted shape of FaultOptions (flags and PUT /_control/faults). */
export const FAULT_OPTIONS_SCHEMA = z
  .object({
    failRate: rate.optional(),
    rateLimitRate: rate.optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    dropRate: rate.optional(),
    malformedRate: rate.optional(),
    truncateRate: rate.optional(),
    latencyMs: z.union([z.number().min(0), z.tuple([z.number().min(0), z.number().min(0)])]).optional(),
    paths: z.array(z.string()).optional(),
    seed: z.number().int().optional(),
  })
  .strict()
  .refine(
    (f) =>
      (f.failRate ?? 0) +
        (f.rateLimitRate ?? 0) +
        (f.dropRate ?? 0) +
        (f.malformedRate ?? 0) +
        (f.truncateRate ?? 0) <=
      1,
    'the fault rates must add up to at most 1',
  );

/**
 * Seeded fault injection: every request under the fault paths draws exactly two numbers, so the
 * same seed and the same request sequence give the same faults. Replacing the options restarts
 * the sequence.
 */
export class FaultPlan {
  private options: FaultOptions = {};
  private rng: Rng = createRng(1);

  constructor(options: FaultOptions = {}) {
    this.set(options);
  }

  /** Replaces the faults (validated; throws on bad options) and restarts the seeded sequence. */
  set(options: FaultOptions): void {
    this.options = FAULT_OPTIONS_SCHEMA.parse(options);
    this.rng = createRng(mixSeed(options.seed ?? 1, 0xfa17));
  }

  get current(): FaultOptions {
    return this.options;
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
    const bands: [FaultDecision['kind'], number | undefined][] = [
      ['drop', o.dropRate],
      ['fail', o.failRate],
      ['rate_limit', o.rateLimitRate],
      ['malformed', o.malformedRate],
      ['truncate', o.truncateRate],
    ];
    let edge = 0;
    for (const [kind, r] of bands) {
      edge += r ?? 0;
      if (u < edge) return { kind, latencyMs: Math.round(latency) };
    }
    return { kind: 'none', latencyMs: Math.round(latency) };
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
