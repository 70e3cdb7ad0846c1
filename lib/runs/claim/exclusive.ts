import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { intArray, prepare, runPrepared } from "../../db/prepared";
import { CLAIMED, RETURNING, toClaimed, type Claimed, type Group } from "./answer";
import { SERVED, servedParam } from "./served";
import { TAKE_LEASE } from "./take-lease";

/**
 * Due runs of schedules whose overlap policy is forbid or skip (run_queue_exclusive_idx, the policy
 * copied on the queue row), each
 * checked against the schedule's earlier unfinished runs. 'forbid' waits while any earlier run is
 * unfinished (pending, waiting on retry backoff, or running). 'skip' skips the run when an earlier
 * one is running or waiting on retry, and otherwise waits only for an earlier run that has not
 * started yet (so a backlog runs one at a time, never side by side).
 */
const claimExclusiveIn = (partitioned: boolean) => {
  // One partition at a time through the index (LATERAL), as the plain claim, stopping at the limit.
  const candidates = (where: SQL) => sql`
    SELECT q.ctid, busy.any AS overlapped, q.run_after
    FROM run_queue q
    CROSS JOIN LATERAL (
      -- Each EXISTS matches one partial index (run_queue_running_idx, run_queue_pending_idx).
      SELECT q.overlap = 'skip' AND (
        EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'running')
        OR EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'pending' AND p.attempts > 0)
      ) AS any
    ) busy
    WHERE q.state = 'pending' AND q.overlap <> 'allow' AND q.run_after <= (SELECT now FROM clock) AND ${SERVED} ${where}
      AND (busy.any
        OR (NOT EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'pending')
          AND NOT EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'running')))
    ORDER BY q.run_after
    LIMIT ${sql.placeholder("limit")}
    FOR UPDATE OF q SKIP LOCKED`;
  const due = partitioned
    ? sql`SELECT x.* FROM unnest(${sql.placeholder("partitions")}::int[]) AS p(partition)
          CROSS JOIN LATERAL (${candidates(sql`AND q.partition = p.partition`)}) x
          LIMIT ${sql.placeholder("limit")}`
    : candidates(sql``);
  return prepare("sk_claim_exclusive", sql`
    WITH clock AS (SELECT sk_now() AS now),
    due AS (${due}),
    skipped AS (
      DELETE FROM run_queue q WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due WHERE overlapped))
      RETURNING q.run_id
    ),
    recorded AS (
      UPDATE runs r SET state = 'skipped', skip_reason = 'overlap', finished_at = (SELECT now FROM clock)
      WHERE r.id = ANY(ARRAY(SELECT run_id FROM skipped))
    ),
    taken AS (
      UPDATE run_queue q SET ${TAKE_LEASE}
      WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due WHERE NOT overlapped))
      RETURNING ${RETURNING}
    ),
    claimed AS (
      SELECT * FROM taken
      UNION ALL
      SELECT run_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'skipped' FROM skipped
    )
    ${CLAIMED}`);
};
const CLAIM_EXCLUSIVE_IN_PARTITIONS = claimExclusiveIn(true);
const CLAIM_EXCLUSIVE_ANYWHERE = claimExclusiveIn(false);

export async function claimExclusive(db: Db, workerId: string, partitions: number[] | null, limit: number, handlers?: readonly string[] | null): Promise<Claimed> {
  const served = servedParam(handlers);
  const result =
    partitions === null
      ? await runPrepared<Group>(db, CLAIM_EXCLUSIVE_ANYWHERE, { workerId, limit, handlers: served })
      : await runPrepared<Group>(db, CLAIM_EXCLUSIVE_IN_PARTITIONS, { workerId, limit, partitions: intArray(partitions), handlers: served });
  return toClaimed(result.rows);
}
