// Shared by the emulator's report tests: walk nested report items down to their counter leaves.
import { type Counters } from '../../../src/flatten/types.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';

export interface Leaf {
  readonly keys: string[];
  readonly counters: Counters;
}

/** Every leaf of `items` nested `depth` levels deep, with its keys in order. */
export function leaves(items: unknown, depth: number, keys: string[] = []): Leaf[] {
  if (depth === 0) return [{ keys, counters: items as Counters }];
  return Object.entries(items as Record<string, unknown>).flatMap(([k, v]) =>
    leaves(v, depth - 1, [...keys, k]),
  );
}

/** Counter sums of leaves. */
export function sum(list: readonly Leaf[]): Counters {
  const out = Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counters;
  for (const leaf of list) for (const c of COUNTERS) out[c] += leaf.counters[c];
  return out;
}
