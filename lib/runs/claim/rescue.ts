import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { prepare, runPrepared } from "../../db/prepared";
import { QUEUED, queuesParam, SERVED, servedParam } from "./served";
import { CLAIMED_BY_QUEUE, RETURNING, toClaimed, type ClaimedRun, type ClaimOutcome, type Group } from "./answer";

/**
 * The rescue of expired leases, shaped like the worker's other maintenance passes: a config with
 * named defaults, validated before use, and one pass that returns what it did. It runs inside a
 * claim (lib/runs/claim/index.ts) rather than on a timer of its own, because the runs it rescues
 * are taken over by the worker that finds them, in the same statement.
 */

/**
 * The share of the poll interval a gated look waits for: a little under the interval, so that the
 * look of the worker whose turn it is is not turned away by a stamp its own previous look left a
 * few milliseconds less than an interval ago.
 */
export const RESCUE_GATE_SHARE = 0.9;

/** At most this many expired runs per pass when the caller names no limit. */
export const RESCUE_LIMIT_DEFAULT = 100;

export type RescueConfig = {
  /** The worker that takes the rescued runs over (the new lease owner). */
  workerId: string;
  /** At most this many expired runs in one pass (default RESCUE_LIMIT_DEFAULT). */
  limit?: number;
  /**
   * Look only if no worker has looked in the last this many ms (the cluster's stamp,
   * cluster.rescued_at): with W workers, one walk of the running runs per interval instead of W.
   * Unset: always look.
   */
  gateMs?: number;
  /**
   * The handlers the rescuing worker serves (null or unset: all). It takes over only runs of those;
   * a run on its final attempt goes dead whoever finds it, since nobody runs it again.
   */
  handlers?: readonly string[] | null;
  /**
   * The queues the rescuing worker has free slots in (null or unset: all). It takes over only runs
   * of those; a run on its final attempt goes dead whoever finds it.
   */
  queues?: readonly string[] | null;
};

/** The gate for a worker that looks once per `intervalMs` (its poll interval); undefined without one. */
export function rescueGateMs(intervalMs: number | undefined): number | undefined {
  return intervalMs ? intervalMs * RESCUE_GATE_SHARE : undefined;
}

/** The config with its defaults filled in; throws naming the field that is wrong. */
export function validateRescueConfig(c: RescueConfig): Required<Pick<RescueConfig, "workerId" | "limit">> & Pick<RescueConfig, "gateMs" | "handlers" | "queues"> {
  const limit = c.limit ?? RESCUE_LIMIT_DEFAULT;
  if (typeof c.workerId !== "string" || c.workerId === "") throw new RangeError("RescueConfig.workerId must be a non-empty string");
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`RescueConfig.limit must be a positive integer, got ${limit}`);
  if (c.gateMs !== undefined && !(Number.isFinite(c.gateMs) && c.gateMs > 0)) throw new RangeError(`RescueConfig.gateMs must be above zero, got ${c.gateMs}`);
  return { workerId: c.workerId, limit, gateMs: c.gateMs, handlers: c.handlers ?? null, queues: c.queues ?? null };
}

/** What one rescue pass did. */
export type RescuePass = {
  /** Runs whose lease had expired, now held by this worker with a new token: run them. */
  claimed: ClaimedRun[];
  /** Runs whose lease expired on their final attempt, now dead. */
  settled: ClaimOutcome[];
  /** How many were taken over and how many went dead (the counts a log line reports). */
  rescued: number;
  dead: number;
};

/**
 * Running runs whose lease ran out: the previous worker died or stalled. Any worker rescues them,
 * whatever partitions it holds, so recovery stays within lease + poll interval and never waits for
 * the dead worker's partition leases to change hands. (Few rows: at most the cluster's total
 * concurrency are running; this reads run_queue_running_idx whole.) The lost attempt is recorded;
 * the run is claimed again by this worker, or goes dead when that was its final attempt.
 */
const rescueStatement = (gated: boolean) =>
  prepare("sk_rescue", sql`
    WITH clock AS (SELECT sk_now() AS now),
    ${
      gated
        ? sql`gate AS (
      -- One look per interval for the cluster: move the stamp when it is older than the interval
      -- (or ahead of the clock, which tests move back), unless another worker holds it right now
      -- (it is looking). Every worker still asks each poll interval, so one that dies leaves the
      -- looking to the others within an interval.
      UPDATE cluster k SET rescued_at = c.now
      FROM clock c
      WHERE k.id = (
        SELECT id FROM cluster
        WHERE id = 1 AND (rescued_at IS NULL OR rescued_at > (SELECT now FROM clock)
          OR rescued_at <= (SELECT now FROM clock) - make_interval(secs => ${sql.placeholder("gateSeconds")}::float8))
        FOR UPDATE SKIP LOCKED)
      RETURNING 1
    ),`
        : sql``
    }
    expired AS (
      SELECT q.ctid, q.run_id, q.attempts, q.max_attempts, q.lease_owner, q.started_at, q.lease_expires_at,
        CASE WHEN q.attempts >= q.max_attempts THEN 'dead' ELSE 'running' END::run_state AS next_state
      FROM run_queue q
      WHERE q.state = 'running' AND q.lease_expires_at < (SELECT now FROM clock) AND (q.attempts >= q.max_attempts OR (${SERVED} AND ${QUEUED})) ${gated ? sql`AND EXISTS (SELECT 1 FROM gate)` : sql``}
      LIMIT ${sql.placeholder("limit")}
      FOR UPDATE SKIP LOCKED
    ),
    lost AS (
      -- The attempt whose lease expired is history too: it ran somewhere and never finished.
      INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error)
      SELECT e.run_id, e.attempts, coalesce(e.lease_owner, 'unknown'), coalesce(e.started_at, e.lease_expires_at),
        e.lease_expires_at, 'lease_expired', 'lease expired: worker ' || coalesce(e.lease_owner, 'unknown') || ' stopped renewing it'
      FROM expired e
      WHERE e.attempts > 0
      ON CONFLICT (run_id, attempt) DO NOTHING
    ),
    recorded AS (
      -- The record of the attempt that ended; a final one leaves the run dead.
      UPDATE runs r SET
        state = CASE WHEN e.next_state = 'dead' THEN 'dead' ELSE r.state END,
        attempts = e.attempts,
        worker_id = coalesce(e.lease_owner, r.worker_id),
        started_at = e.started_at,
        finished_at = CASE WHEN e.next_state = 'dead' THEN (SELECT now FROM clock) ELSE r.finished_at END,
        last_error = CASE WHEN e.next_state = 'dead' THEN 'lease expired on final attempt'
          ELSE 'lease expired: worker ' || coalesce(e.lease_owner, 'unknown') || ' stopped renewing it' END
      FROM expired e
      WHERE r.id = e.run_id
    ),
    claimed AS (
      UPDATE run_queue q SET
        state = e.next_state,
        attempts = CASE WHEN e.next_state = 'running' THEN q.attempts + 1 ELSE q.attempts END,
        lease_owner = CASE WHEN e.next_state = 'running' THEN ${sql.placeholder("workerId")} END,
        lease_expires_at = CASE WHEN e.next_state = 'running' THEN c.now + make_interval(secs => q.lease_seconds) END,
        started_at = CASE WHEN e.next_state = 'running' THEN c.now END,
        run_after = CASE WHEN e.next_state = 'running' THEN c.now + make_interval(secs => q.lease_seconds) ELSE q.run_after END
      FROM expired e, clock c
      WHERE q.ctid = e.ctid
      RETURNING ${RETURNING}, q.queue
    )
    ${CLAIMED_BY_QUEUE}`);

const RESCUE = rescueStatement(false);
const RESCUE_GATED = rescueStatement(true);

/**
 * One pass: take over the running runs whose lease expired (at most `limit`), recording each lost
 * attempt, or send a run dead when that was its final attempt.
 */
export async function rescueExpiredRuns(db: Db, config: RescueConfig): Promise<RescuePass> {
  const { workerId, limit, gateMs, handlers, queues } = validateRescueConfig(config);
  const served = servedParam(handlers);
  const queued = queuesParam(queues);
  const result =
    gateMs === undefined
      ? await runPrepared<Group>(db, RESCUE, { workerId, limit, handlers: served, queues: queued })
      : await runPrepared<Group>(db, RESCUE_GATED, { workerId, limit, gateSeconds: gateMs / 1000, handlers: served, queues: queued });
  const { claimed, settled } = toClaimed(result.rows);
  return { claimed, settled, rescued: claimed.length, dead: settled.length };
}
