import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { prepare, runPrepared } from "../../db/prepared";
import { CLAIMED, RETURNING, splitRefused, toClaimed, type Claimed, type Group } from "./answer";
import { QUEUED, queuesParam, SERVED, servedParam } from "./served";
import { TAKE_LEASE } from "./take-lease";
import { skipTooLateRuns, TOO_LATE } from "./too-late";

/**
 * What both plain claims do with the rows their `due` CTE locked (ctid, run_id, attempts,
 * latest_start_at): take the lease on each one not past its max lateness, answer each one past it
 * as a refused group (state pending, its id and tid) for claimPlain to record, and decode the lot
 * into the claim's answer.
 */
const TAKE_DUE = sql`
    taken AS (
      UPDATE run_queue q SET ${TAKE_LEASE}
      -- ctid = ANY(ARRAY(…)) fetches the locked rows where the lock found them (a TID scan, no index
      -- descent: locked rows cannot move). With a join on the CTE the planner guessed ~100 rows and
      -- seq-scanned the table.
      WHERE q.ctid = ANY(ARRAY(SELECT q.ctid FROM due q WHERE NOT ${TOO_LATE}))
      RETURNING ${RETURNING}
    ),
    claimed AS (
      SELECT * FROM taken
      UNION ALL
      SELECT q.run_id, NULL, NULL, NULL, q.ctid, NULL, NULL, NULL, NULL, NULL, 'pending' FROM due q WHERE ${TOO_LATE}
    )
    ${CLAIMED}`;

/**
 * The claim of the top of the hour: due pending runs of one partition (or all, with null) whose
 * schedule allows overlap, locked in due order and turned into running queue rows (token + 1,
 * lease). One row rewritten with one index entry (run_queue_running_idx), and nothing else read:
 * neither the runs row (written when the attempt ends) nor the schedule (its settings are on the
 * queue row).
 *
 * One clock: every due comparison reads sk_now(), never the worker's clock. It is read once, in
 * the clock CTE: sk_now() is a SQL function PostgreSQL cannot inline, and each (SELECT sk_now())
 * is an InitPlan of its own.
 *
 * Max lateness (too-late.ts): a locked row past its bound (TOO_LATE) is not taken; it comes back
 * as a group of its own (state pending, its id and tid), and claimPlain records it skipped
 * `too_late` in a second statement. Why not in this one: marking a run skipped is an UPDATE of
 * runs, whose statement triggers (alert and chart changes) would then fire on every claim of the
 * top of the hour, late rows or none. The second statement runs only when a claim met one: after
 * an outage or under a backlog longer than a schedule's max lateness, where the claim clears the
 * late rows at its own pace instead of walking past them until the lateness pass comes.
 */
const claimPlainIn = (inPartition: SQL, opts?: { scanAllowed: string }) =>
  prepare("sk_claim", sql`
    WITH clock AS (SELECT sk_now() AS now),
    due AS (
      SELECT q.ctid, q.run_id, q.attempts, q.latest_start_at FROM run_queue q
      WHERE q.state = 'pending' AND q.overlap = 'allow' AND q.run_after <= (SELECT now FROM clock) AND ${SERVED} AND ${QUEUED} ${inPartition}
      ORDER BY q.run_after
      LIMIT ${sql.placeholder("limit")}
      FOR UPDATE SKIP LOCKED
    ),
    ${TAKE_DUE}`, opts);
const CLAIM_IN_PARTITION = claimPlainIn(sql`AND q.partition = ${sql.placeholder("partition")}::int`);

/**
 * The same claim by a worker that names its handlers (a worker always does): each handler's due
 * runs of the partition through run_queue_claim_handler_idx (partition, handler, run_after), in
 * order, up to the limit each, merged in due order and cut to the limit. Why not the filter on
 * (partition, run_after): where a partition holds runs of handlers the worker does not serve (two
 * handlers served by different workers), every claim walked over all of those still pending ahead
 * of its own, again on each claim, and a spike's runs share one due instant. An empty handler
 * costs one index probe.
 *
 * Only run_queue_claim_handler_idx serves a handler's lateral, and the planner picks it only while
 * it believes a handler holds few of the due runs: the statistics of run_queue.handler say so
 * whatever the fleet (lib/db/sql/tables/run_queue.sql).
 *
 * A handler's rows beyond the cut stay locked until the statement commits (at most limit per
 * handler with due runs there), then are free for the next claim. Max lateness
 * as in the claim above: a locked row past its bound comes back refused, for claimPlain to record.
 */
const CLAIM_IN_PARTITION_BY_HANDLER = prepare("sk_claim_handlers", sql`
    WITH clock AS (SELECT sk_now() AS now),
    due AS (
      SELECT x.ctid, x.run_id, x.attempts, x.latest_start_at FROM unnest(${sql.placeholder("handlers")}::text[]) AS h(handler)
      CROSS JOIN LATERAL (
        SELECT q.ctid, q.run_id, q.attempts, q.latest_start_at, q.run_after FROM run_queue q
        WHERE q.state = 'pending' AND q.partition = ${sql.placeholder("partition")}::int AND q.handler = h.handler
          AND q.overlap = 'allow' AND q.run_after <= (SELECT now FROM clock) AND ${QUEUED}
        ORDER BY q.run_after
        LIMIT ${sql.placeholder("limit")}
        FOR UPDATE SKIP LOCKED
      ) x
      ORDER BY x.run_after
      LIMIT ${sql.placeholder("limit")}
    ),
    ${TAKE_DUE}`);
// Due order across every partition cannot come from the (partition, run_after) index: this one
// reads and sorts the due rows. Only tests and tools claim without partitions; a worker always
// claims in the partitions it holds.
const CLAIM_ANYWHERE = claimPlainIn(sql``, { scanAllowed: "claims without partitions (tests and tools); a worker always names its partitions" });

export async function claimPlain(db: Db, workerId: string, partition: number | null, limit: number, handlers?: readonly string[] | null, queue?: string): Promise<Claimed> {
  const served = servedParam(handlers);
  const queues = queuesParam(queue === undefined ? null : [queue]);
  const result =
    partition === null
      ? await runPrepared<Group>(db, CLAIM_ANYWHERE, { workerId, limit, handlers: served, queues })
      : served === null
        ? await runPrepared<Group>(db, CLAIM_IN_PARTITION, { workerId, limit, partition, handlers: served, queues })
        : await runPrepared<Group>(db, CLAIM_IN_PARTITION_BY_HANDLER, { workerId, limit, partition, handlers: served, queues });
  const { refusedTids, rest } = splitRefused(result.rows);
  const out = toClaimed(rest, queue);
  if (refusedTids.length === 0) return out;
  // The claimed runs MUST reach the worker whatever happens now: the first statement committed
  // them running under its lease, and a throw here would leave them to a takeover. A refused run
  // that is not recorded stays refused by every claim, and the lateness pass records it.
  try {
    out.settled.push(...(await skipTooLateRuns(db, refusedTids)));
  } catch {
    // Recorded later (above); the claim pass that follows retries it.
  }
  return out;
}
