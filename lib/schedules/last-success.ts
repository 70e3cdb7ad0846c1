/**
 * The order "longest since its last success first": schedules that never succeeded first (their
 * last success reads as -infinity), then the oldest last success, the id breaking ties. The stored
 * last success is schedule_last_success (one row per schedule), as of the last alert pass: every
 * statement that makes runs done logs its schedules' latest finish in last_success_changes
 * (lib/db/sql/functions/runs_log_changes.sql), and the pass applies the log
 * (applyLastSuccessChanges, below). A schedule's health adds what is logged and not applied yet
 * (pendingLastSuccess), so its status is exact; the order below is as of the last pass. The key is exactly the first column of
 * schedule_last_success_order_idx (lib/db/schema.ts) and the id its second, so a walk in this
 * order from `lastSuccessFrom` is an index walk that stops after a page: the list's lastSuccess
 * sort and the Overview's worst 50 both use it, and a keyset cursor compares (key, id) as a row.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";

/** The schedules `s` with their last success `l`, in the order the index keeps. */
export const lastSuccessFrom: SQL = sql`schedule_last_success l JOIN schedules s ON s.id = l.schedule_id`;

/** The sort key (the index's expression: it names the column of `l`, no table). */
export const lastSuccessKey: SQL = sql`coalesce(l.last_success_at, '-infinity'::timestamptz)`;

/** The tie-break that goes with the key: the index's second column. */
export const lastSuccessId: SQL = sql`l.schedule_id`;

/** Log rows applied per statement: each drain is its own short transaction. */
export const LAST_SUCCESS_DRAIN_CHUNK = 1_000;

/**
 * Apply the logged successes to schedule_last_success, raising each schedule's to its latest
 * logged finish (never lowering it). Each chunk is one statement: the rows it deletes are exactly
 * the ones it applies, so a crash loses nothing and a success committed after the delete's
 * snapshot stays in the log for the next pass. The rows are locked in schedule id order, so two
 * drains could never deadlock (one runs at a time, under the alert pass's lock, anyway); they are
 * not the schedules rows, so a drain and an edit of a schedule never wait for each other.
 * Returns how many log rows it applied.
 */
export async function applyLastSuccessChanges(db: Pick<Db, "execute">): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await db.execute<{ n: number }>(sql`
      WITH d AS (
        DELETE FROM last_success_changes WHERE ctid = ANY(ARRAY(SELECT ctid FROM last_success_changes LIMIT ${LAST_SUCCESS_DRAIN_CHUNK}))
        RETURNING schedule_ids, finished_ats
      ),
      n AS (SELECT u.id, max(u.at) AS at FROM d, unnest(d.schedule_ids, d.finished_ats) AS u(id, at) GROUP BY u.id),
      l AS (
        SELECT l.schedule_id, n.at FROM schedule_last_success l JOIN n ON n.id = l.schedule_id
        WHERE l.last_success_at IS NULL OR l.last_success_at < n.at
        ORDER BY l.schedule_id FOR UPDATE OF l),
      raised AS (
        UPDATE schedule_last_success s SET last_success_at = l.at FROM l WHERE s.schedule_id = l.schedule_id RETURNING 1)
      SELECT (SELECT count(*) FROM d)::int AS n`);
    const n = r.rows[0]?.n ?? 0;
    total += n;
    if (n < LAST_SUCCESS_DRAIN_CHUNK) return total;
  }
}

/**
 * The latest logged success not applied yet of each schedule in `ids` (a bigint[] expression), as
 * a relation `(schedule_id, at)`: the log holds at most one alert pass's worth of finishes, read
 * once for the whole set. Only the log rows that name one of `ids` are unnested (`&&`): a row
 * holds one statement's finishes, so a page's or a search's few schedules appear in few of them,
 * and the log between two passes can hold hundreds of thousands of finishes.
 */
export const pendingLastSuccess = (ids: SQL): SQL => sql`
  SELECT u.id AS schedule_id, max(u.at) AS at
  FROM last_success_changes c, unnest(c.schedule_ids, c.finished_ats) AS u(id, at)
  WHERE c.schedule_ids && ${ids} AND u.id = ANY(${ids}) GROUP BY u.id`;
