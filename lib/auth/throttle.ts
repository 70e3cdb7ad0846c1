import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/**
 * Slows down password guessing, per client address and per account, without letting a stranger
 * lock the real user out.
 *
 * - Per address: after FREE_FAILURES failures within the window, each further attempt from that
 *   address must wait 2^n seconds (capped at MAX_DELAY_SECONDS) after its last failure.
 * - Per account: the same count of failures against the account, but its delay applies only to
 *   addresses that have themselves failed within the window. A correct password from an address
 *   with no failures always gets through, however many strangers guessed at the account; an
 *   attacker spread over many addresses gets one free guess per address before the account's delay
 *   catches each of them.
 *
 * The counts are rows of `login_failures`, so every web process shares them and a restart forgets
 * nothing; every age is measured with sk_now(), the one clock. A failure adds to both counts in one
 * statement, so no failure is ever counted against the address but not the account.
 */
export const FREE_FAILURES = 5;
export const WINDOW_SECONDS = 15 * 60;
export const MAX_DELAY_SECONDS = 5 * 60;

type Queryable = Pick<Db, "execute">;

/** Who is trying: the client address (null when unknown) and the account name. */
export type Attempt = { address: string | null; account: string };

const addressOf = (a: Attempt) => a.address ?? "unknown";

/**
 * The delay owed by a count: 0 under FREE_FAILURES, then 1 s, 2 s, 4 s … up to MAX_DELAY_SECONDS,
 * counted from the last failure. `ageMs` is how long ago that failure was.
 * Examples: (5 failures, 0 ms ago) → 1000; (6, 500) → 1500; (30, 0) → 300000; (4, 0) → 0.
 */
export function owedMs(failures: number, ageMs: number): number {
  if (failures < FREE_FAILURES) return 0;
  const d = 1000 * Math.min(MAX_DELAY_SECONDS, 2 ** (failures - FREE_FAILURES));
  return Math.max(0, d - ageMs);
}

/** Milliseconds this attempt must still wait (0: go ahead), by the database clock. */
export async function throttleWaitMs(db: Queryable, a: Attempt): Promise<number> {
  const { rows } = await db.execute<{ kind: string; failures: number; age_ms: number }>(sql`
    SELECT kind, failures, (extract(epoch FROM sk_now() - last_failure_at) * 1000)::float8 AS age_ms
    FROM login_failures
    WHERE ((kind = 'address' AND subject = ${addressOf(a)}) OR (kind = 'account' AND subject = ${a.account}))
      AND last_failure_at > sk_now() - make_interval(secs => ${WINDOW_SECONDS})`);
  const address = rows.find((r) => r.kind === "address");
  const account = rows.find((r) => r.kind === "account");
  // The account's count holds back only an address that has failed itself (see above).
  if (!address) return 0;
  return Math.max(owedMs(address.failures, Number(address.age_ms)), account ? owedMs(account.failures, Number(account.age_ms)) : 0);
}

/** Count a failed attempt against its address and its account (one statement: both or neither). */
export async function recordLoginFailure(db: Queryable, a: Attempt): Promise<void> {
  await db.execute(sql`
    INSERT INTO login_failures AS f (kind, subject, failures, last_failure_at)
    VALUES ('address', ${addressOf(a)}, 1, sk_now()), ('account', ${a.account}, 1, sk_now())
    ON CONFLICT (kind, subject) DO UPDATE SET
      failures = CASE WHEN f.last_failure_at > sk_now() - make_interval(secs => ${WINDOW_SECONDS}) THEN f.failures + 1 ELSE 1 END,
      last_failure_at = sk_now()`);
}

/**
 * Forget the failures of an address that just signed in. The account's count stays: a stranger's
 * addresses keep their delay even after the real user got in.
 */
export async function recordLoginSuccess(db: Queryable, a: Attempt): Promise<void> {
  await db.execute(sql`DELETE FROM login_failures WHERE kind = 'address' AND subject = ${addressOf(a)}`);
}

/** Delete counts whose last failure left the window (the retention sweep); at most `limit`, returns how many. */
export async function deleteStaleLoginFailures(db: Queryable, limit = 1000): Promise<number> {
  const res = await db.execute(sql`
    DELETE FROM login_failures WHERE (kind, subject) IN (
      SELECT kind, subject FROM login_failures WHERE last_failure_at <= sk_now() - make_interval(secs => ${WINDOW_SECONDS}) LIMIT ${limit})`);
  return res.rowCount ?? 0;
}
