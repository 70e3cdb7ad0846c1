/**
 * The Overview shared by every reader of one database handle in this process. An open console
 * refetches it every 2 s, and at fleet scale one reading costs hundreds of milliseconds of database
 * time (lib/health/overview.ts): twenty open consoles each reading it for themselves would keep a
 * core busy. Shared, they cost one reading per `maxAgeMs`, whatever their number.
 *
 * - An answer younger than `maxAgeMs` (counted from when its reading began) is served as it is.
 * - Otherwise the reader joins the reading in flight, or starts it, and gets its answer; but when
 *   that takes longer than STALE_WAIT_MS and the last answer is younger than STALE_FACTOR ×
 *   `maxAgeMs`, it gets the last answer instead, and the reading goes on for the readers after it.
 *   One console on a small fleet so always sees a new reading (it takes milliseconds); twenty on a
 *   fleet whose reading takes half a second wait at most STALE_WAIT_MS.
 *
 * - A reading that took longer than `maxAgeMs` ÷ DUTY_FACTOR keeps its answer fresh for
 *   DUTY_FACTOR times what it took, so the readings take at most 1 ÷ DUTY_FACTOR of one database
 *   connection's time, however slow they get. Why: at the top of the hour of a large fleet a
 *   reading takes longer than `maxAgeMs` (the wait histogram visits every due run, whose pages the
 *   claims keep changing), and readings that began again as soon as they ended would keep a
 *   backend reading the Overview beside the workers for the whole spike (docs/benchmarks.md).
 *
 * So an answer is at most STALE_FACTOR × max(`maxAgeMs`, DUTY_FACTOR × its reading's time) old,
 * and says when it was read (`totals.now`, the database clock). A failed reading is not kept and
 * fails its waiting readers (a read from a standby then falls back to the primary,
 * lib/server/route.ts); the next reader tries again.
 * `maxAgeMs` 0 reads the database for every request (SLOTKEEPER_OVERVIEW_MAX_AGE_MS).
 */
import type { Db } from "../db/client";
import { getOverview, type OverviewSummary } from "./overview";

/** How many times maxAgeMs an answer may reach while a new reading is under way. */
export const STALE_FACTOR = 5;
/** How long a reader waits for a new reading before it takes the last answer. */
export const STALE_WAIT_MS = 100;
/** An answer stays fresh for at least this many times what its reading took. */
export const DUTY_FACTOR = 4;

/** `readAt`: when the kept answer's reading began; `tookMs`: how long it took. */
type Shared = { value: OverviewSummary | null; readAt: number; tookMs: number; inFlight: Promise<OverviewSummary> | null };

const byDb = new WeakMap<Db, Shared>();

/** The Overview of `db`, shared as the module comment says; `read` is the reading (getOverview, or a stand-in in tests). */
export async function sharedOverview(db: Db, maxAgeMs: number, read: (db: Db) => Promise<OverviewSummary> = getOverview): Promise<OverviewSummary> {
  if (maxAgeMs <= 0) return read(db);
  let s = byDb.get(db);
  if (!s) byDb.set(db, (s = { value: null, readAt: 0, tookMs: 0, inFlight: null }));
  const age = performance.now() - s.readAt;
  const freshMs = Math.max(maxAgeMs, DUTY_FACTOR * s.tookMs);
  if (s.value && age < freshMs) return s.value;
  const reading = s.inFlight ?? start(db, s, read);
  if (!s.value || age >= freshMs * STALE_FACTOR) return reading;
  const last = s.value;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<OverviewSummary>((resolve) => (timer = setTimeout(() => resolve(last), STALE_WAIT_MS)));
  try {
    return await Promise.race([reading, waited]);
  } finally {
    clearTimeout(timer);
  }
}

function start(db: Db, s: Shared, read: (db: Db) => Promise<OverviewSummary>): Promise<OverviewSummary> {
  const begun = performance.now();
  const reading = read(db).then(
    (value) => {
      s.value = value;
      s.readAt = begun;
      s.tookMs = performance.now() - begun;
      s.inFlight = null;
      return value;
    },
    (err: unknown) => {
      s.inFlight = null;
      throw err;
    },
  );
  s.inFlight = reading;
  return reading;
}
