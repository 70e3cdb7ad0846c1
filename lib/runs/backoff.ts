/**
 * Retry delays: exponential backoff with "full jitter" (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"). The ceiling doubles per attempt up to a cap, and the actual delay is
 * uniform in [0, ceiling], which spreads retries of many failing runs instead of having them
 * retry in lock-step.
 *
 * Worked example, base 30 s, cap 900 s:
 *   attempt   1   2    3    4    5    6   7 ...
 *   ceiling  30  60  120  240  480  900  900 ...
 * The ceilings of the first six retries sum to 1,830 s (30.5 min): the worst-case wait before
 * a sixth retry; on average the wait is half that.
 */

export type RetryPolicy = { maxAttempts: number; baseSeconds: number; capSeconds: number };

/** min(cap, base * 2^(attempt-1)), for attempt >= 1. */
export function backoffCeilingSeconds(policy: RetryPolicy, attempt: number): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  const { baseSeconds, capSeconds } = policy;
  if (!(baseSeconds >= 0) || !(capSeconds >= 0)) throw new RangeError("baseSeconds and capSeconds must be >= 0");
  // 2^1024 is Infinity; stop doubling long before that matters.
  if (attempt > 64) return capSeconds;
  return Math.min(capSeconds, baseSeconds * 2 ** (attempt - 1));
}

/** A delay uniform in [0, ceiling], in seconds (millisecond resolution). */
export function backoffSeconds(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = backoffCeilingSeconds(policy, attempt);
  const r = random();
  if (!(r >= 0 && r <= 1)) throw new RangeError(`random() must return a number in [0, 1], got ${r}`);
  return Math.round(r * ceiling * 1000) / 1000;
}
