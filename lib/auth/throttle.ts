/**
 * Slows down password guessing: after FREE_FAILURES failures for a key (a client address or an
 * account) within WINDOW_MS, each further attempt must wait 2^n seconds (capped at MAX_DELAY_MS)
 * after the last failure. In memory, per web process: a restart forgets, and several web processes
 * each count on their own — enough to turn an online guessing attack from thousands of tries a
 * second into a few a minute.
 */
const FREE_FAILURES = 5;
const WINDOW_MS = 15 * 60_000;
const MAX_DELAY_MS = 5 * 60_000;
const MAX_KEYS = 10_000;

type Entry = { failures: number; lastFailureMs: number };

/** A failure counter per key with exponential lock-out. */
export class LoginThrottle {
  private entries = new Map<string, Entry>();

  /** Milliseconds the keys must still wait before another attempt is allowed (0: go ahead). */
  waitMs(keys: string[], nowMs = Date.now()): number {
    let wait = 0;
    for (const k of keys) {
      const e = this.entries.get(k);
      if (!e || nowMs - e.lastFailureMs > WINDOW_MS || e.failures < FREE_FAILURES) continue;
      const delay = Math.min(MAX_DELAY_MS, 1000 * 2 ** (e.failures - FREE_FAILURES));
      wait = Math.max(wait, e.lastFailureMs + delay - nowMs);
    }
    return Math.max(0, wait);
  }

  /** Count a failed attempt against every key. */
  fail(keys: string[], nowMs = Date.now()): void {
    if (this.entries.size > MAX_KEYS) this.prune(nowMs);
    for (const k of keys) {
      const e = this.entries.get(k);
      const fresh = !e || nowMs - e.lastFailureMs > WINDOW_MS;
      this.entries.set(k, { failures: fresh ? 1 : e.failures + 1, lastFailureMs: nowMs });
    }
  }

  /** Forget the failures of keys that just signed in successfully. */
  succeed(keys: string[]): void {
    for (const k of keys) this.entries.delete(k);
  }

  private prune(nowMs: number): void {
    for (const [k, e] of this.entries) if (nowMs - e.lastFailureMs > WINDOW_MS) this.entries.delete(k);
  }
}
