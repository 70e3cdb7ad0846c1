// Pool exhaustion: a schedule whose handler hogs the database — sql-ledger's `holdConnections`
// statements of `holdMs` each (pg_sleep) at once, more than the worker's handler pool holds, so
// they queue on it for several rounds. Everything else must go on as before: the worker's claims
// and lease renewals use a pool of their own (worker/index.ts), so starts_over_bound and
// leases_lost_by_live_workers stay 0.
import type pg from "pg";
import type { ScheduleBody } from "./plan";

/** 30 statements of 2 s: three rounds on a handler pool of 12 (concurrency 10 + 2), or on the worker's 14 if it shared one. */
export const HOG = { holdConnections: 30, holdMs: 2000, everySeconds: 20 };

/** The hog schedule, with the run's common settings. */
export function hogSchedule(runTag: string, common: Pick<ScheduleBody, "catchUp" | "leaseSeconds" | "retry">): ScheduleBody {
  return { name: `chaos-${runTag}-hog-0`, handler: "sql-ledger", payload: { holdConnections: HOG.holdConnections, holdMs: HOG.holdMs }, everySeconds: HOG.everySeconds, ...common };
}

/** Hog runs that finished after queueing on an exhausted pool (at least two rounds of holdMs). */
export async function readPoolExhaustions(pool: pg.Pool, scheduleIds: number[]) {
  const r = await pool.query<{ done: number; exhausted: number; longest_ms: number | null }>(
    `SELECT count(*)::int AS done, count(*) FILTER (WHERE duration_ms >= $2)::int AS exhausted, max(duration_ms)::float8 AS longest_ms
     FROM runs WHERE schedule_id = ANY($1::bigint[]) AND state = 'done' AND origin <> 'manual'`,
    [scheduleIds, 2 * HOG.holdMs],
  );
  return { ...r.rows[0], connections_per_run: HOG.holdConnections, hold_ms: HOG.holdMs };
}
