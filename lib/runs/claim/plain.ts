import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { prepare, runPrepared } from "../../db/prepared";
import { CLAIMED, RETURNING, toClaimed, type Claimed, type Group } from "./answer";
import { SERVED, servedParam } from "./served";
import { TAKE_LEASE } from "./take-lease";

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
 */
const claimPlainIn = (inPartition: SQL, opts?: { scanAllowed: string }) =>
  prepare("sk_claim", sql`
    WITH clock AS (SELECT sk_now() AS now),
    due AS (
      SELECT q.ctid FROM run_queue q
      WHERE q.state = 'pending' AND q.overlap = 'allow' AND q.run_after <= (SELECT now FROM clock) AND ${SERVED} ${inPartition}
      ORDER BY q.run_after
      LIMIT ${sql.placeholder("limit")}
      FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
      UPDATE run_queue q SET ${TAKE_LEASE}
      -- ctid = ANY(ARRAY(…)) fetches the locked rows where the lock found them (a TID scan, no index
      -- descent: locked rows cannot move). With a join on the CTE the planner guessed ~100 rows and
      -- seq-scanned the table.
      WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due))
      RETURNING ${RETURNING}
    )
    ${CLAIMED}`, opts);
const CLAIM_IN_PARTITION = claimPlainIn(sql`AND q.partition = ${sql.placeholder("partition")}::int`);
// Due order across every partition cannot come from the (partition, run_after) index: this one
// reads and sorts the due rows. Only tests and tools claim without partitions; a worker always
// claims in the partitions it holds.
const CLAIM_ANYWHERE = claimPlainIn(sql``, { scanAllowed: "claims without partitions (tests and tools); a worker always names its partitions" });

export async function claimPlain(db: Db, workerId: string, partition: number | null, limit: number, handlers?: readonly string[] | null): Promise<Claimed> {
  const served = servedParam(handlers);
  const result =
    partition === null
      ? await runPrepared<Group>(db, CLAIM_ANYWHERE, { workerId, limit, handlers: served })
      : await runPrepared<Group>(db, CLAIM_IN_PARTITION, { workerId, limit, partition, handlers: served });
  return toClaimed(result.rows);
}
