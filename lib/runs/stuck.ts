/**
 * Stuck runs: the one definition, used by the run views (lib/runs/history.ts), the schedule's
 * health (lib/health/schedule-health.ts) and through it the `stuck` alert rule and the metrics.
 *
 * A run is **stuck** when its current attempt is still running with a live lease (its worker keeps
 * heartbeating: `lease_expires_at` after the database clock) and has been running longer than its
 * schedule's stuck threshold:
 *
 * - with a `timeoutSeconds`: timeout + max(timeout, 60 s). The worker aborts an attempt at its
 *   timeout, so an attempt still heartbeating that far past it is one the timeout did not stop.
 *   Examples: timeout 30 s → stuck after 90 s; timeout 600 s → 1,200 s.
 * - without one: max(10 × p95 of the durations of its last 20 successful runs, 600 s), once it has
 *   at least 3 successes to judge by; a schedule with fewer has no usual duration yet, and its
 *   runs are never stuck. Examples: p95 2 s → 600 s (the floor); p95 5 min → 3,000 s.
 *
 * `stuckSince` is when the attempt crossed the threshold (its start + the threshold). A run whose
 * lease expired is not stuck but lost: the next claim rescues it (recorded `lease_expired`).
 * Everything is measured on the database clock (sk_now()), the attempt's start as its claim wrote it.
 */
import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";

/** Without a timeout: this many times the p95 of recent successful durations. */
export const STUCK_P95_FACTOR = 10;
/** Without a timeout: never stuck sooner than this. */
export const STUCK_FLOOR_SECONDS = 600;
/** The recent successful runs whose durations give the p95. */
export const STUCK_HISTORY_RUNS = 20;
/** Fewer successful runs than this: no usual duration, so no threshold without a timeout. */
export const STUCK_MIN_SUCCESSES = 3;
/** With a timeout: stuck after timeout + max(timeout, this). */
export const STUCK_TIMEOUT_MIN_MARGIN_SECONDS = 60;
/** No threshold is shorter than this (a 1 s timeout + the margin): an attempt younger than it is never stuck. */
export const STUCK_MIN_AFTER_SECONDS = 1 + STUCK_TIMEOUT_MIN_MARGIN_SECONDS;

/**
 * SQL: the stuck threshold in seconds (float8) of the schedule row `s`, or NULL when it has none
 * (no timeout and too few successes). The history is read newest slot first through runs_slot_key,
 * at most STUCK_HISTORY_RUNS done runs: callers evaluate it only for a schedule with a running
 * attempt older than STUCK_MIN_AFTER_SECONDS.
 */
export function stuckAfterSql(s: string): SQL {
  const a = sql.raw(s);
  return sql`CASE WHEN ${a}.timeout_seconds IS NOT NULL
      THEN (${a}.timeout_seconds + greatest(${a}.timeout_seconds, ${STUCK_TIMEOUT_MIN_MARGIN_SECONDS}))::float8
      ELSE (SELECT CASE WHEN count(*) >= ${STUCK_MIN_SUCCESSES}
          THEN greatest(${STUCK_P95_FACTOR} * percentile_cont(0.95) WITHIN GROUP (ORDER BY h.duration_ms) / 1000.0, ${STUCK_FLOOR_SECONDS})::float8 END
        FROM (SELECT r.duration_ms FROM runs r WHERE r.schedule_id = ${a}.id AND r.state = 'done' AND r.duration_ms IS NOT NULL
          ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST LIMIT ${STUCK_HISTORY_RUNS}) h)
    END`;
}

/** A stuck run: since when (ISO), and the threshold it crossed. */
export const stuckRunSchema = z.object({ runId: z.number().int(), startedAt: z.string(), since: z.string(), afterSeconds: z.number() }).strict();
export type StuckRun = z.infer<typeof stuckRunSchema>;

/** Of these runs (id, schedule and exact slot text), the stuck ones by id (one query; runs not running are skipped). */
export async function stuckRuns(db: Pick<Db, "execute">, runs: { id: number; scheduleId: number; scheduledForText: string }[]): Promise<Map<number, StuckRun>> {
  const out = new Map<number, StuckRun>();
  if (runs.length === 0) return out;
  // Each queue row through run_queue_running_idx (schedule, slot), then checked on its run id.
  const r = await db.execute<{ run_id: number; started_at: Date; since: Date; after_seconds: number }>(sql`
    WITH clock AS (SELECT sk_now() AS now OFFSET 0)
    SELECT q.run_id, q.started_at, q.started_at + make_interval(secs => st.after_seconds) AS since, st.after_seconds
    FROM clock c
    CROSS JOIN unnest(${sql.param(runs.map((x) => x.id))}::bigint[], ${sql.param(runs.map((x) => x.scheduleId))}::bigint[], ${sql.param(runs.map((x) => x.scheduledForText))}::timestamptz[])
      AS x(id, schedule_id, scheduled_for)
    JOIN run_queue q ON q.state = 'running' AND q.schedule_id = x.schedule_id AND q.scheduled_for = x.scheduled_for AND q.run_id = x.id
    JOIN schedules s ON s.id = q.schedule_id
    CROSS JOIN LATERAL (SELECT ${stuckAfterSql("s")} AS after_seconds WHERE q.started_at <= c.now - make_interval(secs => ${STUCK_MIN_AFTER_SECONDS})) st
    WHERE q.lease_expires_at > c.now AND q.started_at + make_interval(secs => st.after_seconds) < c.now`);
  for (const row of r.rows) {
    out.set(Number(row.run_id), { runId: Number(row.run_id), startedAt: new Date(row.started_at).toISOString(), since: new Date(row.since).toISOString(), afterSeconds: Number(row.after_seconds) });
  }
  return out;
}
