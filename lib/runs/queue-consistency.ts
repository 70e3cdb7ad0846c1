import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/** Ways run_queue can disagree with runs; all zero when every writer kept them in step. */
export type QueueMismatches = {
  /** Unfinished runs (pending, running or dead in runs) without a queue row. */
  missing: number;
  /** Queue rows whose run is gone or settled (done, skipped). */
  orphaned: number;
  /** Queue rows whose state the record contradicts (dead in one, waiting or running in the other). */
  wrongState: number;
  /** Runs with more than one queue row. */
  duplicated: number;
  /** Queue rows whose copy of their schedule's settings (claim rule, name, lease, queue, max lateness bound, and handler, payload and retry through run_settings) is out of date. */
  staleCopies: number;
};

/**
 * Check the invariant between runs and run_queue: one queue row for each unfinished run, none for
 * a settled one, and the same state where runs can tell (it reads 'pending' for a running run).
 * Whole-table reads: for tests and the fault suite's report, not for the hot path.
 */
export async function findQueueMismatches(db: Pick<Db, "execute">): Promise<QueueMismatches> {
  const r = await db.execute<{ missing: number; orphaned: number; wrong_state: number; duplicated: number; stale_copies: number }>(sql`
    SELECT
      (SELECT count(*) FROM runs r WHERE r.state IN ('pending', 'running', 'dead')
         AND NOT EXISTS (SELECT 1 FROM run_queue q WHERE q.run_id = r.id))::int AS missing,
      (SELECT count(*) FROM run_queue q LEFT JOIN runs r ON r.id = q.run_id
         WHERE r.id IS NULL OR r.state IN ('done', 'skipped'))::int AS orphaned,
      (SELECT count(*) FROM run_queue q JOIN runs r ON r.id = q.run_id
         WHERE (q.state = 'dead') <> (r.state = 'dead') AND r.state NOT IN ('done', 'skipped'))::int AS wrong_state,
      (SELECT count(*) FROM (SELECT run_id FROM run_queue GROUP BY run_id HAVING count(*) > 1) d)::int AS duplicated,
      -- A manual run with its own payload has its own settings row: the schedule's in all but the payload.
      (SELECT count(*) FROM run_queue q JOIN schedules s ON s.id = q.schedule_id JOIN runs r ON r.id = q.run_id
         LEFT JOIN run_settings rs ON rs.id = q.settings_id
         -- A never-attempted run waiting at its due time carries its slot's max lateness bound.
         WHERE (q.overlap, q.schedule_name, q.lease_seconds, CASE WHEN r.payload_override IS NULL THEN q.settings_id END, q.queue,
                rs.handler, rs.payload, rs.retry_max_attempts, rs.retry_base_seconds, rs.retry_cap_seconds, rs.timeout_seconds,
                CASE WHEN q.state = 'pending' AND q.attempts = 0 AND q.run_after = r.due_at THEN q.latest_start_at END)
           IS DISTINCT FROM (sk_claim_rule(s.overlap, s.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = s.handler)),
             s.name, s.lease_seconds, CASE WHEN r.payload_override IS NULL THEN s.settings_id END, s.queue,
             s.handler, coalesce(r.payload_override, s.payload), s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds, s.timeout_seconds,
             CASE WHEN q.state = 'pending' AND q.attempts = 0 AND q.run_after = r.due_at THEN sk_latest_start(q.origin, r.due_at, s.max_lateness_seconds) END))::int AS stale_copies`);
  const row = r.rows[0];
  return { missing: row.missing, orphaned: row.orphaned, wrongState: row.wrong_state, duplicated: row.duplicated, staleCopies: row.stale_copies };
}
