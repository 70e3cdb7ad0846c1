import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { intArray, prepare, runPrepared } from "../../db/prepared";
import { CLAIMED, RETURNING, toClaimed, type Claimed, type Group } from "./answer";
import { QUEUED, queuesParam, SERVED, servedParam } from "./served";
import { TAKE_LEASE } from "./take-lease";
import { TOO_LATE } from "./too-late";

/**
 * The limited claim: due runs whose queue row's claim rule (run_queue.overlap, sk_claim_rule) is not
 * 'allow' — schedules whose overlap policy is forbid or skip, schedules with a maxConcurrent, and
 * runs of handlers with a fleet-wide limit (handler_limits). They are few and have an index of their
 * own (run_queue_exclusive_idx), so the plain claim of the top of the hour never looks at limits.
 *
 * The rule, in one place (LIMIT_RULE below): a schedule with a limit of n — 1 for overlap forbid and
 * skip, maxConcurrent otherwise — starts a run only while fewer than n of its runs are running or
 * waiting ahead of it (pending with an earlier slot, due or not), so its runs start in slot order
 * and never more than n at once. For n = 1 that is 'forbid': nothing earlier unfinished, nothing
 * running. 'skip' skips the run instead when an earlier one is running or waiting on retry. A
 * handler with a limit of m starts, across the fleet, at most m minus its running runs, earliest due first.
 *
 * Counting is only right if no other claim takes runs of the same schedule or handler between the
 * count and the commit, so the claim is a transaction of two statements: the first finds which
 * limited schedules and handlers have due runs here and takes a transaction-scoped advisory lock on
 * each (pg_try_advisory_xact_lock: a key another worker holds is left to it, nobody waits; handler
 * keys before the keys of their schedules, so one claim ends up with both); the
 * second, whose snapshot starts after those locks and so sees every claim committed before them,
 * counts and claims only runs whose keys it holds. The locks end with the transaction.
 *
 * Max lateness (too-late.ts): a never-attempted run past its bound is never taken; the second
 * statement records it skipped `too_late` beside the overlap skips (this claim writes runs for
 * those anyway), whatever the limits say, since it will not run.
 */

/** What a due limited run of this worker's scope is: partition (or every one), handler, queue. */
const SCOPE = sql`q.state = 'pending' AND q.overlap <> 'allow' AND q.run_after <= (SELECT now FROM clock) AND ${SERVED} AND ${QUEUED}
  AND (${sql.placeholder("partitions")}::int[] IS NULL OR q.partition = ANY(${sql.placeholder("partitions")}::int[]))`;

/** The advisory lock key of a limited schedule ('s', its id) or handler ('h', its name). */
const LOCK_KEY = (kind: string, name: SQL) => sql`hashtextextended(${sql.raw(`'sk_limit:${kind}:'`)} || ${name}, 0)`;

const LIMIT_LOCKS = prepare("sk_claim_exclusive_locks", sql`
  WITH clock AS (SELECT sk_now() AS now),
  due AS MATERIALIZED (
    SELECT DISTINCT q.schedule_id, q.handler, q.overlap FROM run_queue q WHERE ${SCOPE}
  ),
  handler_keys AS MATERIALIZED (
    SELECT k.handler, pg_try_advisory_xact_lock(${LOCK_KEY("h", sql`k.handler`)}) AS got
    FROM (SELECT DISTINCT d.handler FROM due d JOIN handler_limits hl ON hl.handler = d.handler) k
  ),
  -- A schedule's key is tried only once every limited handler of its due runs is held here: a
  -- claim that lost a handler to another cannot take that handler's schedules from it, which
  -- would leave those schedules to nobody this pass (each claim would hold one key of two).
  schedule_keys AS MATERIALIZED (
    SELECT k.schedule_id, pg_try_advisory_xact_lock(${LOCK_KEY("s", sql`k.schedule_id::text`)}) AS got
    FROM (
      SELECT DISTINCT d.schedule_id FROM due d JOIN schedules s ON s.id = d.schedule_id
      WHERE d.overlap <> 'limited' OR s.max_concurrent IS NOT NULL
    ) k
    WHERE NOT EXISTS (SELECT 1 FROM due d JOIN handler_keys h ON h.handler = d.handler WHERE d.schedule_id = k.schedule_id AND NOT h.got)
  )
  SELECT EXISTS (SELECT 1 FROM due) AS due,
    ARRAY(SELECT schedule_id FROM schedule_keys WHERE got) AS schedules,
    ARRAY(SELECT handler FROM handler_keys WHERE got) AS handlers`);

/**
 * The rule (see the module comment), for the candidate q with its schedule's limit lim.n: fewer
 * than n of the schedule's runs running, plus pending ahead of it. Each count stops at n and reads
 * one partial index (run_queue_running_idx, run_queue_pending_idx).
 */
const LIMIT_RULE = sql`(lim.n IS NULL OR
  (SELECT count(*) FROM (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.state = 'running' LIMIT lim.n) r)
  + (SELECT count(*) FROM (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.state = 'pending' AND p.scheduled_for < q.scheduled_for LIMIT lim.n) a)
  < lim.n)`;

const claimLimitedIn = (partitioned: boolean) => {
  // One partition at a time through the index (LATERAL), as the plain claim, stopping at the limit.
  const candidates = (where: SQL) => sql`
    SELECT q.ctid, busy.any AS overlapped, ${TOO_LATE} AS late, q.run_after, q.handler, hl.max_concurrent AS handler_limit
    FROM run_queue q
    JOIN schedules s ON s.id = q.schedule_id
    LEFT JOIN handler_limits hl ON hl.handler = q.handler
    CROSS JOIN LATERAL (SELECT CASE WHEN q.overlap IN ('forbid', 'skip') THEN 1 ELSE s.max_concurrent END AS n) lim
    CROSS JOIN LATERAL (
      -- Each EXISTS matches one partial index (run_queue_running_idx, run_queue_pending_idx).
      SELECT q.overlap = 'skip' AND (
        EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'running')
        OR EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'pending' AND p.attempts > 0)
      ) AS any
    ) busy
    WHERE ${SCOPE} ${where}
      -- Only runs whose schedule and handler locks this transaction holds (LIMIT_LOCKS).
      AND (lim.n IS NULL OR q.schedule_id = ANY(${sql.placeholder("lockedSchedules")}::bigint[]))
      -- A run past its max lateness is skipped whatever the limits (it will never run), once its
      -- keys are held like any other.
      AND (hl.handler IS NULL OR (q.handler = ANY(${sql.placeholder("lockedHandlers")}::text[])
        AND (${TOO_LATE} OR hl.max_concurrent > coalesce((SELECT h.n FROM handler_running h WHERE h.handler = q.handler), 0))))
      AND (${TOO_LATE} OR busy.any OR ${LIMIT_RULE})
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
    -- The running runs of the limited handlers this transaction holds (few: at most the fleet's
    -- concurrency are running), counted once.
    handler_running AS MATERIALIZED (
      SELECT p.handler, count(*) AS n FROM run_queue p
      WHERE p.state = 'running' AND cardinality(${sql.placeholder("lockedHandlers")}::text[]) > 0 AND p.handler = ANY(${sql.placeholder("lockedHandlers")}::text[])
      GROUP BY p.handler
    ),
    due AS (${due}),
    -- A handler's limit over the runs found: at most its free slots, earliest due first (runs to
    -- skip take none).
    chosen AS (
      SELECT d.ctid, d.overlapped OR d.late AS skip FROM (
        SELECT d.*, row_number() OVER (PARTITION BY d.handler, d.overlapped OR d.late ORDER BY d.run_after) AS rn FROM due d
      ) d
      WHERE d.overlapped OR d.late OR d.handler_limit IS NULL
        OR d.rn + coalesce((SELECT h.n FROM handler_running h WHERE h.handler = d.handler), 0) <= d.handler_limit
    ),
    -- Skipped: past max lateness (too_late, which wins: the run could never start), or overlapped.
    skipped AS (
      DELETE FROM run_queue q WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM chosen WHERE skip))
      RETURNING q.run_id, CASE WHEN ${TOO_LATE} THEN 'too_late' ELSE 'overlap' END::skip_reason AS reason
    ),
    recorded AS (
      -- id = ANY(…) probes the primary key for each run; the join only brings its reason along.
      UPDATE runs r SET state = 'skipped', skip_reason = k.reason, finished_at = (SELECT now FROM clock),
        skipped_until = CASE WHEN k.reason = 'too_late' THEN r.scheduled_for ELSE r.skipped_until END,
        skipped_count = CASE WHEN k.reason = 'too_late' THEN 1 ELSE r.skipped_count END
      FROM skipped k
      WHERE r.id = ANY(ARRAY(SELECT run_id FROM skipped)) AND r.id = k.run_id
    ),
    taken AS (
      UPDATE run_queue q SET ${TAKE_LEASE}
      WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM chosen WHERE NOT skip))
      RETURNING ${RETURNING}
    ),
    claimed AS (
      SELECT * FROM taken
      UNION ALL
      SELECT run_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'skipped' FROM skipped
    )
    ${CLAIMED}`);
};
const CLAIM_LIMITED_IN_PARTITIONS = claimLimitedIn(true);
const CLAIM_LIMITED_ANYWHERE = claimLimitedIn(false);

/**
 * Claim up to `limit` due runs of limited schedules and handlers (the module comment): one
 * transaction, the locks and then the claim. `queue` keeps it to one queue (the worker's claim of
 * that queue's free slots); unset, every queue.
 */
export async function claimExclusive(
  db: Db,
  workerId: string,
  partitions: number[] | null,
  limit: number,
  handlers?: readonly string[] | null,
  queue?: string,
): Promise<Claimed> {
  const scope = { handlers: servedParam(handlers), queues: queuesParam(queue === undefined ? null : [queue]), partitions: partitions === null ? null : intArray(partitions) };
  return db.transaction(async (tx) => {
    const locks = await runPrepared<{ due: boolean; schedules: (string | number)[]; handlers: string[] }>(tx as unknown as Db, LIMIT_LOCKS, scope);
    const l = locks.rows[0];
    if (!l.due) return { claimed: [], settled: [], exclusiveFound: 0 };
    const values = { ...scope, workerId, limit, lockedSchedules: intArray(l.schedules.map(Number)), lockedHandlers: l.handlers };
    const result = await runPrepared<Group>(tx as unknown as Db, partitions === null ? CLAIM_LIMITED_ANYWHERE : CLAIM_LIMITED_IN_PARTITIONS, values);
    return toClaimed(result.rows, queue);
  });
}
