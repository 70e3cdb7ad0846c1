import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

/**
 * Stand the database clock at `at` (every process on this database sees it) or, with null, give
 * it back to `now()`. This is how tests move time: never by sleeping.
 */
export async function setClock(db: Queryable, at: Date | string | null): Promise<void> {
  await db.query("UPDATE sk_clock SET frozen_at = $1, shift = interval '0' WHERE id = 1", [at === null ? null : new Date(at)]);
}

/** Let the clock run, offset from the real one so that it reads `at` right now. */
export async function runClockFrom(db: Queryable, at: Date | string): Promise<void> {
  await db.query("UPDATE sk_clock SET frozen_at = NULL, shift = $1::timestamptz - now() WHERE id = 1", [new Date(at)]);
}

/** Move a frozen clock forward (or a running one) by `ms`. */
export async function advanceClock(db: Queryable, ms: number): Promise<void> {
  await db.query(
    "UPDATE sk_clock SET frozen_at = frozen_at + make_interval(secs => $1::float8 / 1000), shift = CASE WHEN frozen_at IS NULL THEN shift + make_interval(secs => $1::float8 / 1000) ELSE shift END WHERE id = 1",
    [ms],
  );
}

/** What the database clock reads now. */
export async function dbNow(db: Queryable): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>("SELECT sk_now() AS now");
  return rows[0].now;
}
