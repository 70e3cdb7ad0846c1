import { configDefaults } from "../config";

/**
 * A schedule's stated worst-case start lateness, in seconds: a slot waits at most one poll interval
 * to be claimed, plus its jitter window, plus one lease if the worker that claimed it dies (the run
 * is taken over only when the lease expires). The article: "a 5-second poll interval alone makes
 * runs up to 5 seconds late, and a dead worker adds up to the 30-second lease".
 *
 * worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: 30 }, 5000) === 35
 */
export function worstCaseLatenessSeconds(
  s: { jitterSeconds: number; leaseSeconds: number },
  pollIntervalMs: number = configDefaults.pollIntervalMs,
): number {
  return Math.ceil(pollIntervalMs / 1000 + s.jitterSeconds + s.leaseSeconds);
}
