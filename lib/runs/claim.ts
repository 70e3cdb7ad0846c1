import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { executePrepared } from "../db/prepared";
import type { RetryPolicy } from "./backoff";

/** A run this worker now holds: everything needed to call its handler and to fence its writes. */
export type ClaimedRun = {
  id: number;
  scheduleId: number;
  scheduleName: string;
  handler: string;
  payload: unknown;
  scheduledFor: Date;
  /** The fencing token: `runs.attempts` after this claim. Every later write names it. */
  attempt: number;
  leaseSeconds: number;
  origin: "schedule" | "catch_up" | "manual" | "backfill";
  retry: RetryPolicy;
  maxAttempts: number;
};

/** What one claim statement did to a row: only `running` rows are handed to handlers. */
export type ClaimOutcome = { id: number; state: "running" | "skipped" | "dead" };

export type ClaimOptions = {
  workerId: string;
  partitions: number[] | null;
  limit: number;
  /**
   * Also look for running runs whose lease expired (default true). The look reads every running
   * run, a thousand or more during a spike, so a worker claiming many times a second does it once
   * per poll interval, not on every claim (the runner decides), which keeps recovery within
   * lease + poll interval.
   */
  rescueExpired?: boolean;
};

type Row = {
  id: number;
  schedule_id: number;
  schedule_name: string;
  handler: string;
  payload: unknown;
  scheduled_for_ms: number;
  attempts: number;
  lease_seconds: number;
  origin: ClaimedRun["origin"];
  retry_max_attempts: number;
  retry_base_seconds: number;
  retry_cap_seconds: number;
  max_attempts: number;
  state: ClaimOutcome["state"];
};

/**
 * Claim up to `limit` due runs in one statement: pending runs whose run_after has passed and
 * running runs whose lease expired, skipping rows other workers hold (FOR UPDATE SKIP LOCKED).
 * Returns only the runs this worker must now execute; overlap skips and final-attempt expiries
 * are settled in the same statement (see `claimRunsDetailed`).
 */
export async function claimRuns(db: Db, opts: ClaimOptions): Promise<ClaimedRun[]> {
  const { claimed } = await claimRunsDetailed(db, opts);
  return claimed;
}

/** Where the next multi-partition claim starts, so every held partition gets its turn at the head. */
let rotation = 0;

type Claimed = { claimed: ClaimedRun[]; settled: ClaimOutcome[] };

/**
 * `claimRuns`, also reporting the rows the statement skipped (overlap) or sent dead (lease expired on the final attempt).
 *
 * With several partitions it claims one partition per statement, rotating the starting one, until
 * the limit is reached. Why: `partition = $1 … ORDER BY run_after LIMIT n` walks the
 * (partition, run_after) index in order and stops after n rows (1.6 ms for 500 of 400,000 due
 * rows, measured with scripts/bench/explain.ts), while `partition = ANY($parts)` cannot return
 * index order on PostgreSQL 15: it read and sorted all 200,000 due rows of 8 partitions (225 ms).
 */
export async function claimRunsDetailed(db: Db, opts: ClaimOptions): Promise<Claimed> {
  if (opts.limit <= 0) return { claimed: [], settled: [] };
  const rescue = opts.rescueExpired !== false;
  if (opts.partitions === null) return claimInPartition(db, opts, null, rescue);
  const parts = opts.partitions;
  // Holding no partition (yet, or any more) must still rescue expired leases: recovery stays within
  // lease + poll interval and never waits for a dead worker's partition leases to change hands.
  if (parts.length === 0) return rescue ? claimInPartition(db, opts, -1) : { claimed: [], settled: [] };
  const out: Claimed = { claimed: [], settled: [] };
  const start = rotation++ % Math.max(1, parts.length);
  for (let i = 0; i < parts.length; i++) {
    const left = opts.limit - out.claimed.length - out.settled.length;
    if (left <= 0) break;
    const r = await claimInPartition(db, { ...opts, limit: left }, parts[(start + i) % parts.length], rescue && i === 0);
    out.claimed.push(...r.claimed);
    out.settled.push(...r.settled);
  }
  return out;
}

/**
 * One claim statement over one partition (or all of them, with null). Only the first statement of a
 * pass (`rescueExpired`) looks for expired leases: they are looked for in every partition anyway, so
 * the other statements skip that scan (a constant-false filter, never executed).
 */
async function claimInPartition(db: Db, opts: ClaimOptions, partition: number | null, rescueExpired = true): Promise<Claimed> {
  const inPartition = (alias: string) => (partition === null ? sql`` : sql`AND ${sql.raw(alias)}.partition = ${partition}::int`);

  // One clock: every due/expired comparison reads sk_now(), never the worker's clock. Per-row uses
  // are written (SELECT sk_now()), an InitPlan read once per statement: sk_now() is a SQL function
  // that cannot be inlined, and called bare in SET it ran ~1,500 times per 500-run claim.
  const result = await executePrepared<Row>(db, "sk_claim", sql`
    WITH expired AS (
      -- Running runs whose lease ran out: the previous worker died or stalled. Any worker rescues
      -- them, whatever partitions it holds, so recovery stays within lease + poll interval and never
      -- waits for the dead worker's partition leases to change hands. (Few rows: at most the
      -- cluster's total concurrency are running.)
      SELECT r.id, r.ctid, r.attempts, r.max_attempts, r.lease_owner, r.started_at, r.lease_expires_at
      FROM runs r
      WHERE r.state = 'running' AND r.lease_expires_at < (SELECT sk_now()) AND ${sql.raw(rescueExpired ? "true" : "false")}
      LIMIT ${opts.limit}
      FOR UPDATE SKIP LOCKED
    ),
    due AS (
      -- Pending runs that are due. Overlap: 'forbid' waits while any earlier run of the schedule is
      -- unfinished (pending, incl. waiting on retry backoff, or running). 'skip' marks the run skipped
      -- when an earlier one is running or waiting on retry, and otherwise waits only for an earlier
      -- run that has not started yet (so a backlog runs one at a time, never side by side).
      SELECT r.id, r.ctid, busy.any AS overlapped
      FROM runs r
      -- One primary-key probe per run, in due order: OFFSET 0 keeps this a per-row lookup. As a
      -- plain join the planner hash-joined a seq scan of every schedule and sorted the partition's
      -- due runs (11 ms of a 14 ms claim at 40,000 schedules, measured with scripts/bench/profile.ts).
      CROSS JOIN LATERAL (SELECT sc.overlap FROM schedules sc WHERE sc.id = r.schedule_id OFFSET 0) s
      CROSS JOIN LATERAL (
        -- Each EXISTS matches one partial index (runs_running_idx, runs_pending_idx).
        SELECT s.overlap = 'skip' AND (
          EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = r.schedule_id AND p.scheduled_for < r.scheduled_for AND p.state = 'running')
          OR EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = r.schedule_id AND p.scheduled_for < r.scheduled_for AND p.state = 'pending' AND p.attempts > 0)
        ) AS any
      ) busy
      WHERE r.state = 'pending' AND r.run_after <= sk_now() ${inPartition("r")}
        AND (s.overlap = 'allow'
          OR busy.any
          OR (NOT EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = r.schedule_id AND p.scheduled_for < r.scheduled_for AND p.state = 'pending')
            AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = r.schedule_id AND p.scheduled_for < r.scheduled_for AND p.state = 'running')))
      ORDER BY r.run_after
      -- A plain LIMIT the planner can see: with "limit - count(expired)" here it could not, assumed
      -- a large result and chose hash join + sort over every due row of the partition (40 ms per 500
      -- on 20,000 rows instead of ~5). The total is capped in picked.
      LIMIT ${opts.limit}
      FOR UPDATE OF r SKIP LOCKED
    ),
    picked AS (
      -- Expired leases first (all of them fit: expired has the same LIMIT), then due runs, up to the limit.
      SELECT x.id, x.ctid, x.lease_expired, x.next_state FROM (
        -- A run whose final attempt's lease expired goes dead rather than past its allowance.
        SELECT e.id, e.ctid, true AS lease_expired, CASE WHEN e.attempts >= e.max_attempts THEN 'dead' ELSE 'running' END::run_state AS next_state, 0 AS rank
        FROM expired e
        UNION ALL
        SELECT d.id, d.ctid, false, CASE WHEN d.overlapped THEN 'skipped' ELSE 'running' END::run_state, 1
        FROM due d
      ) x
      ORDER BY x.rank
      LIMIT ${opts.limit}
    ),
    lost AS (
      -- The attempt whose lease expired is history too: it ran somewhere and never finished.
      INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error)
      SELECT e.id, e.attempts, coalesce(e.lease_owner, 'unknown'), coalesce(e.started_at, e.lease_expires_at),
        e.lease_expires_at, 'lease_expired', 'lease expired: worker ' || coalesce(e.lease_owner, 'unknown') || ' stopped renewing it'
      FROM expired e
      WHERE e.attempts > 0
      ON CONFLICT (run_id, attempt) DO NOTHING
    )
    UPDATE runs r SET
      state = d.next_state,
      -- Fencing: the token rises on every claim, so the previous holder's writes match no row.
      attempts = CASE WHEN d.next_state = 'running' THEN r.attempts + 1 ELSE r.attempts END,
      lease_owner = CASE WHEN d.next_state = 'running' THEN ${opts.workerId} END,
      worker_id = CASE WHEN d.next_state = 'running' THEN ${opts.workerId} ELSE r.worker_id END,
      lease_expires_at = CASE WHEN d.next_state = 'running' THEN (SELECT sk_now()) + make_interval(secs => s.lease_seconds) END,
      started_at = CASE WHEN d.next_state = 'running' THEN (SELECT sk_now()) ELSE r.started_at END,
      finished_at = CASE WHEN d.next_state = 'running' THEN NULL ELSE (SELECT sk_now()) END,
      skip_reason = CASE WHEN d.next_state = 'skipped' THEN 'overlap'::skip_reason ELSE r.skip_reason END,
      last_error = CASE
        WHEN d.next_state = 'dead' THEN 'lease expired on final attempt'
        WHEN d.lease_expired THEN 'lease expired: worker ' || coalesce(r.lease_owner, 'unknown') || ' stopped renewing it'
        ELSE r.last_error
      END
    FROM picked d, schedules s
    -- ctid = ANY(ARRAY(…)) fetches the picked rows where the lock found them (a TID scan, no
    -- primary-key descent: the rows are locked, so they cannot have moved); r.id = d.id still
    -- checks each one. With a plain join on a CTE the planner guessed ~100 rows and seq-scanned runs.
    WHERE r.ctid = ANY(ARRAY(SELECT ctid FROM picked)) AND r.id = d.id AND s.id = r.schedule_id
    RETURNING r.id, r.schedule_id, s.name AS schedule_name, s.handler, s.payload,
      -- Epoch milliseconds: db.execute hands timestamptz back as text.
      (extract(epoch FROM r.scheduled_for) * 1000)::float8 AS scheduled_for_ms, r.attempts,
      s.lease_seconds, r.origin, s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds, r.max_attempts, r.state`);

  const claimed: ClaimedRun[] = [];
  const settled: ClaimOutcome[] = [];
  for (const row of result.rows) {
    if (row.state !== "running") {
      settled.push({ id: row.id, state: row.state });
      continue;
    }
    claimed.push({
      id: row.id,
      scheduleId: row.schedule_id,
      scheduleName: row.schedule_name,
      handler: row.handler,
      payload: row.payload,
      scheduledFor: new Date(row.scheduled_for_ms),
      attempt: row.attempts,
      leaseSeconds: row.lease_seconds,
      origin: row.origin,
      retry: { maxAttempts: row.retry_max_attempts, baseSeconds: row.retry_base_seconds, capSeconds: row.retry_cap_seconds },
      maxAttempts: row.max_attempts,
    });
  }
  return { claimed, settled };
}
