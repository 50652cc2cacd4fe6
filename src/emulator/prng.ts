// Seeded pseudo-random numbers for all the emulator invents: one seed, the same bytes on any machine.

export type Rng = ReturnType<typeof createRng>;

/** Mixes any number of 32-bit integers into one well-spread 32-bit seed (murmur3 finaliser per step). */
export function mixSeed(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Split into two 32-bit halves so seeds above 2^32 (and negative ones) still count fully.
    const lo = part >>> 0;
    const hi = Math.floor(part / 0x100000000) >>> 0;
    for (const word of [lo, hi]) {
      h = Math.imul(h ^ word, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      h ^= h >>> 16;
    }
  }
  return h >>> 0;
}

/** A mulberry32 generator: tiny, fast and good enough for test data (not for cryptography). */
export function createRng(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick() needs a non-empty array');
      return item;
    },
    chance: (p: number) => next() < p,
  };
}
