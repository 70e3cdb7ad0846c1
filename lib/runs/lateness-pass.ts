import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

type Executor = Pick<Db, "execute">;

/** Slots the lateness pass turned into skipped rows, by reason. */
export type LatenessPassResult = { skipped: number; coalesced: number; tooLate: number };

/**
 * Apply catch-up and max lateness to runs that were materialised as pending and are now late and
 * never attempted (a worker outage after the tick wrote them), in one statement per partition set:
 * - a run whose due time is older than its schedule's max lateness → skipped `too_late` (any policy);
 * - else older than sk_now() - grace: `skip` → skipped `missed`; `latest` → every late run but the
 *   newest of its schedule is skipped `coalesced` into that newest one; `all` → left to run.
 * Only origin `schedule`/`catch_up` with attempts = 0: retries are not missed slots, and manual and
 * backfill runs were asked for explicitly, so neither catch-up nor max lateness applies to them.
 * It reads run_queue (a pending run there has not started; runs alone cannot tell a running run
 * from a waiting one). Only the rows it changes are locked, and rows a claimer holds are skipped (SKIP LOCKED): they are
 * being run, which settles them. Locking every late run instead meant that in a backlog older than
 * the grace period (a top of the hour that takes longer than 30 s to start) every tick locked the
 * whole backlog, which under 'latest' it leaves as it is, and the claims skipped past those locks.
 * (SELECT sk_now()) is an InitPlan, read once: bare sk_now() in a filter would be evaluated for
 * every pending run.
 */
export async function runLatenessPass(db: Executor, opts: { partitions: number[] | null; graceSeconds: number }): Promise<LatenessPassResult> {
  // Late rows of each held partition through run_queue_claim_idx (partition, run_after): an index
  // range that is empty while nothing is past the grace, however large the backlog of due runs.
  const cutoff = sql`(SELECT sk_now()) - make_interval(secs => ${opts.graceSeconds})`;
  const lateRows =
    opts.partitions === null
      ? sql`SELECT q.* FROM run_queue q WHERE q.state = 'pending' AND q.run_after < ${cutoff}`
      : sql`SELECT q.* FROM unnest(${sql.param(opts.partitions)}::int[]) AS p(partition)
          CROSS JOIN LATERAL (SELECT q.* FROM run_queue q WHERE q.partition = p.partition AND q.state = 'pending' AND q.run_after < ${cutoff}) q`;
  const r = await db.execute<{ reason: "missed" | "coalesced" | "too_late"; n: number }>(sql`
    WITH late AS (
      -- Never-attempted pending runs: their run_after is still their due_at (slot + jitter).
      SELECT q.run_id, q.schedule_id, q.scheduled_for, s.catch_up,
             (s.max_lateness_seconds IS NOT NULL
               AND q.run_after < (SELECT sk_now()) - make_interval(secs => s.max_lateness_seconds)) AS too_late
      FROM (${lateRows}) q
      -- A primary-key probe per late run (OFFSET 0 keeps it one): joined, the planner hashed a
      -- sequential scan of every schedule even when no run was late (52 ms at 200,000 schedules).
      CROSS JOIN LATERAL (SELECT s.catch_up, s.max_lateness_seconds FROM schedules s WHERE s.id = q.schedule_id OFFSET 0) s
      WHERE q.attempts = 0 AND q.origin IN ('schedule', 'catch_up')
        -- Under 'all' a late run stays pending unless max lateness applies: don't touch that backlog every tick.
        AND (s.catch_up <> 'all' OR s.max_lateness_seconds IS NOT NULL)
        AND (s.catch_up <> 'all' OR q.run_after < (SELECT sk_now()) - make_interval(secs => s.max_lateness_seconds))
    ), ranked AS (
      SELECT late.*, max(scheduled_for) FILTER (WHERE NOT too_late) OVER (PARTITION BY schedule_id) AS newest
      FROM late
    ), decided AS (
      SELECT run_id,
        CASE WHEN too_late THEN 'too_late'
             WHEN catch_up = 'skip' THEN 'missed'
             WHEN catch_up = 'latest' AND scheduled_for < newest THEN 'coalesced'
        END::skip_reason AS reason,
        CASE WHEN NOT too_late AND catch_up = 'latest' AND scheduled_for < newest THEN newest END AS into_slot,
        schedule_id, scheduled_for
      FROM ranked
    ), locked AS (
      -- Lock what will change, and check it is still a never-attempted pending run now that it is
      -- locked (a claimer may have taken it since the snapshot; it then runs instead).
      SELECT q.ctid, q.run_id FROM decided d
      CROSS JOIN LATERAL (
        SELECT q.ctid, q.run_id FROM run_queue q
        WHERE q.state = 'pending' AND q.schedule_id = d.schedule_id AND q.scheduled_for = d.scheduled_for AND q.run_id = d.run_id AND q.attempts = 0
        FOR UPDATE SKIP LOCKED
      ) q
      WHERE d.reason IS NOT NULL
    ), unqueued AS (
      DELETE FROM run_queue q WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM locked))
    ), skipped AS (
      UPDATE runs SET state = 'skipped', skip_reason = d.reason, coalesced_into = d.into_slot,
             skipped_until = runs.scheduled_for, skipped_count = 1, finished_at = sk_now()
      FROM decided d JOIN locked l ON l.run_id = d.run_id
      WHERE runs.id = d.run_id
      RETURNING d.reason
    )
    SELECT reason, count(*)::int AS n FROM skipped GROUP BY reason`);
  const out: LatenessPassResult = { skipped: 0, coalesced: 0, tooLate: 0 };
  for (const row of r.rows) {
    if (row.reason === "missed") out.skipped += row.n;
    else if (row.reason === "coalesced") out.coalesced += row.n;
    else out.tooLate += row.n;
  }
  return out;
}
