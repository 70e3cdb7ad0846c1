import { seededRandom } from "../../lib/testing/random";

/** A seeded generator (lib/testing/random.ts), so a failing chaos run can be replayed with its --seed. */
export function createRandom(seed: number) {
  const { next, pick } = seededRandom(seed);
  return {
    /** Uniform in [0, 1). */
    next,
    /** Integer in [min, max]. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    /** One element of a non-empty array. */
    pick,
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
