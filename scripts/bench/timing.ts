// Wall-clock timing for the bench's measuring scripts (sweep-cost, profile, console, alerts-measure,
// scripts/console-timings.ts): one way to time a call, repeat it, and summarise the samples.
import { performance } from "node:perf_hooks";

/** What `fn` returned, and how many milliseconds it took. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** Call `fn` `n` times in a row (it is given the round, 0…n−1): each call's milliseconds, in order. */
export async function timeRounds(n: number, fn: (round: number) => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) ms.push((await timed(() => fn(i))).ms);
  return ms;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/**
 * The median (the upper middle one of an even count) and the largest of `ms`, to 0.1 ms:
 * medianMax([3, 1, 2]) = { medianMs: 2, maxMs: 3 }; medianMax([4, 1, 3, 2]) = { medianMs: 3, maxMs: 4 }.
 */
export function medianMax(ms: number[]): { medianMs: number; maxMs: number } {
  if (ms.length === 0) throw new Error("medianMax: no samples");
  const sorted = [...ms].sort((a, b) => a - b);
  return { medianMs: r1(sorted[Math.floor(sorted.length / 2)]), maxMs: r1(sorted[sorted.length - 1]) };
}
