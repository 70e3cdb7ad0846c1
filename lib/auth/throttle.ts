/**
 * Slows down password guessing, per client address and per account, without letting a stranger
 * lock the real user out.
 *
 * - Per address: after FREE_FAILURES failures within WINDOW_MS, each further attempt from that
 *   address must wait 2^n seconds (capped at MAX_DELAY_MS) after its last failure.
 * - Per account: the same count of failures against the account, but its delay applies only to
 *   addresses that have themselves failed within the window. A correct password from an address
 *   with no failures always gets through, however many strangers guessed at the account; an
 *   attacker spread over many addresses gets one free guess per address before the account's delay
 *   catches each of them.
 *
 * In memory, per web process: a restart forgets, and several web processes each count on their
 * own — enough to turn an online guessing attack from thousands of tries a second into a few a
 * minute.
 */
const FREE_FAILURES = 5;
const WINDOW_MS = 15 * 60_000;
const MAX_DELAY_MS = 5 * 60_000;
const MAX_KEYS = 10_000;

type Entry = { failures: number; lastFailureMs: number };

/** Who is trying: the client address (null when unknown) and the account name. */
export type Attempt = { address: string | null; account: string };

/** Failure counters per address and per account, with exponential delays. */
export class LoginThrottle {
  private entries = new Map<string, Entry>();

  private live(key: string, nowMs: number): Entry | undefined {
    const e = this.entries.get(key);
    return e && nowMs - e.lastFailureMs <= WINDOW_MS ? e : undefined;
  }

  private delay(e: Entry | undefined, nowMs: number): number {
    if (!e || e.failures < FREE_FAILURES) return 0;
    const d = Math.min(MAX_DELAY_MS, 1000 * 2 ** (e.failures - FREE_FAILURES));
    return Math.max(0, e.lastFailureMs + d - nowMs);
  }

  /** Milliseconds this attempt must still wait (0: go ahead). */
  waitMs(a: Attempt, nowMs = Date.now()): number {
    const address = this.live(ipKey(a), nowMs);
    const account = address ? this.live(accountKey(a), nowMs) : undefined;
    return Math.max(this.delay(address, nowMs), this.delay(account, nowMs));
  }

  /** Count a failed attempt against its address and its account. */
  fail(a: Attempt, nowMs = Date.now()): void {
    if (this.entries.size > MAX_KEYS) this.prune(nowMs);
    for (const k of [ipKey(a), accountKey(a)]) {
      const e = this.live(k, nowMs);
      this.entries.set(k, { failures: e ? e.failures + 1 : 1, lastFailureMs: nowMs });
    }
  }

  /**
   * Forget the failures of an address that just signed in. The account's count stays: a stranger's
   * addresses keep their delay even after the real user got in.
   */
  succeed(a: Attempt): void {
    this.entries.delete(ipKey(a));
  }

  private prune(nowMs: number): void {
    for (const [k, e] of this.entries) if (nowMs - e.lastFailureMs > WINDOW_MS) this.entries.delete(k);
  }
}

const ipKey = (a: Attempt) => `ip:${a.address ?? "unknown"}`;
const accountKey = (a: Attempt) => `user:${a.account}`;
