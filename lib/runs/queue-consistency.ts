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
};

/**
 * Check the invariant between runs and run_queue: one queue row for each unfinished run, none for
 * a settled one, and the same state where runs can tell (it reads 'pending' for a running run).
 * Whole-table reads: for tests and the fault suite's report, not for the hot path.
 */
export async function findQueueMismatches(db: Pick<Db, "execute">): Promise<QueueMismatches> {
  const r = await db.execute<{ missing: number; orphaned: number; wrong_state: number; duplicated: number }>(sql`
    SELECT
      (SELECT count(*) FROM runs r WHERE r.state IN ('pending', 'running', 'dead')
         AND NOT EXISTS (SELECT 1 FROM run_queue q WHERE q.run_id = r.id))::int AS missing,
      (SELECT count(*) FROM run_queue q LEFT JOIN runs r ON r.id = q.run_id
         WHERE r.id IS NULL OR r.state IN ('done', 'skipped'))::int AS orphaned,
      (SELECT count(*) FROM run_queue q JOIN runs r ON r.id = q.run_id
         WHERE (q.state = 'dead') <> (r.state = 'dead') AND r.state NOT IN ('done', 'skipped'))::int AS wrong_state,
      (SELECT count(*) FROM (SELECT run_id FROM run_queue GROUP BY run_id HAVING count(*) > 1) d)::int AS duplicated`);
  const row = r.rows[0];
  return { missing: row.missing, orphaned: row.orphaned, wrongState: row.wrong_state, duplicated: row.duplicated };
}
