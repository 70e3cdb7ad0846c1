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
 * Only the rows it changes are locked, and rows a claimer holds are skipped (SKIP LOCKED): they are
 * being run, which settles them. Locking every late run instead meant that in a backlog older than
 * the grace period (a top of the hour that takes longer than 30 s to start) every tick locked the
 * whole backlog, which under 'latest' it leaves as it is, and the claims skipped past those locks.
 * (SELECT sk_now()) is an InitPlan, read once: bare sk_now() in a filter would be evaluated for
 * every pending run.
 */
export async function runLatenessPass(db: Executor, opts: { partitions: number[] | null; graceSeconds: number }): Promise<LatenessPassResult> {
  const partitions = opts.partitions === null ? null : sql.param(opts.partitions);
  const r = await db.execute<{ reason: "missed" | "coalesced" | "too_late"; n: number }>(sql`
    WITH late AS (
      SELECT r.id, r.schedule_id, r.scheduled_for, s.catch_up,
             (s.max_lateness_seconds IS NOT NULL
               AND r.due_at < (SELECT sk_now()) - make_interval(secs => s.max_lateness_seconds)) AS too_late
      FROM runs r JOIN schedules s ON s.id = r.schedule_id
      WHERE r.state = 'pending' AND r.attempts = 0 AND r.origin IN ('schedule', 'catch_up')
        AND r.run_after < (SELECT sk_now()) - make_interval(secs => ${opts.graceSeconds})
        AND r.due_at < (SELECT sk_now()) - make_interval(secs => ${opts.graceSeconds})
        AND (${partitions}::int[] IS NULL OR r.partition = ANY(${partitions}::int[]))
        -- Under 'all' a late run stays pending unless max lateness applies: don't touch that backlog every tick.
        AND (s.catch_up <> 'all' OR s.max_lateness_seconds IS NOT NULL)
        AND (s.catch_up <> 'all' OR r.due_at < (SELECT sk_now()) - make_interval(secs => s.max_lateness_seconds))
    ), ranked AS (
      SELECT late.*, max(scheduled_for) FILTER (WHERE NOT too_late) OVER (PARTITION BY schedule_id) AS newest
      FROM late
    ), decided AS (
      SELECT id,
        CASE WHEN too_late THEN 'too_late'
             WHEN catch_up = 'skip' THEN 'missed'
             WHEN catch_up = 'latest' AND scheduled_for < newest THEN 'coalesced'
        END::skip_reason AS reason,
        CASE WHEN NOT too_late AND catch_up = 'latest' AND scheduled_for < newest THEN newest END AS into_slot
      FROM ranked
    ), locked AS (
      -- Lock what will change, and check it is still a never-attempted pending run now that it is
      -- locked (a claimer may have taken it since the snapshot; it then runs instead).
      SELECT r.id FROM runs r
      WHERE r.id = ANY(ARRAY(SELECT id FROM decided WHERE reason IS NOT NULL)) AND r.state = 'pending' AND r.attempts = 0
      FOR UPDATE SKIP LOCKED
    ), skipped AS (
      UPDATE runs SET state = 'skipped', skip_reason = d.reason, coalesced_into = d.into_slot,
             skipped_until = runs.scheduled_for, skipped_count = 1, finished_at = sk_now()
      FROM decided d JOIN locked l ON l.id = d.id
      WHERE runs.id = d.id
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
