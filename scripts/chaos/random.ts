/** A seeded PRNG (mulberry32), so a failing chaos run can be replayed with its --seed. */
export function createRandom(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    /** Uniform in [0, 1). */
    next,
    /** Integer in [min, max]. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    /** One element of a non-empty array. */
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
    /** True with probability p. */
    chance: (p: number) => next() < p,
  };
}

export type Random = ReturnType<typeof createRandom>;

/** The value at quantile q (0..1) of an unsorted list, or null when empty (nearest-rank). */
export function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((x, y) => x - y);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}
