import type { Db } from "../../db/client";
import type { Claimed, ClaimedRun, ClaimOutcome } from "./answer";
import { claimExclusive } from "./exclusive";
import { claimPlain } from "./plain";
import { rescueExpiredRuns } from "./rescue";

// The claim: one module per statement family, as graphile-worker keeps one file per statement.
//   plain.ts      due runs of schedules that allow overlap, one partition per statement (the top of the hour)
//   exclusive.ts  due runs of schedules whose overlap policy is forbid or skip, with their overlap checks
//   rescue.ts     running runs whose lease expired: taken over, or dead on their final attempt
//   answer.ts     what every claim statement returns and how it is decoded into ClaimedRun objects
//   served.ts     routing: the filter that keeps a claim to the handlers its worker serves
//   take-lease.ts what a claim writes on the queue row it takes (token + 1, the lease)
export type { Claimed, ClaimedRun, ClaimOutcome } from "./answer";
export { RESCUE_GATE_SHARE, rescueExpiredRuns, rescueGateMs, validateRescueConfig, type RescueConfig, type RescuePass } from "./rescue";

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
  /**
   * Look only if no worker has looked in the last this many ms (the cluster's stamp): with W
   * workers, one walk of the running runs per interval instead of W. Without it, always look.
   */
  rescueGateMs?: number;
  /**
   * Also claim runs of schedules whose overlap policy is forbid or skip (default true). Their claim
   * checks each run's predecessors, in a statement of its own over a small index; when there were
   * none at the last look, a worker claiming many times a second asks once per poll interval.
   */
  checkExclusive?: boolean;
  /**
   * The handlers this worker serves: it claims (and rescues) only runs of those (routing, see
   * served.ts). Null or unset: every handler (tests and tools).
   */
  handlers?: readonly string[] | null;
  /**
   * Routing: also claim, after the held partitions, due runs of these handlers in any partition
   * (default false). A partition's holder may not serve every handler, so a run there would wait
   * for ever; this sweep lets a worker that serves it take it. It reads and sorts the due rows of
   * every partition (no per-partition index order), so the worker asks once per poll interval, and
   * only when it has slots left after its own partitions.
   */
  sweepUnheld?: boolean;
};

/**
 * Claim up to `limit` due runs: running runs whose lease expired, then pending runs whose run_after
 * has passed, skipping rows other workers hold (FOR UPDATE SKIP LOCKED on run_queue, the live part
 * of unfinished runs). Returns only the runs this worker must now execute; overlap skips and
 * final-attempt expiries are settled on the way (see `claimRunsDetailed`).
 */
export async function claimRuns(db: Db, opts: ClaimOptions): Promise<ClaimedRun[]> {
  const { claimed } = await claimRunsDetailed(db, opts);
  return claimed;
}

/** Where the next multi-partition claim starts, so every held partition gets its turn at the head. */
let rotation = 0;

/**
 * `claimRuns`, also reporting the rows it skipped (overlap) or sent dead (lease expired on the final
 * attempt), and how many runs of exclusive schedules it found (the runner's cue to keep asking).
 *
 * Up to three kinds of statement, each small, in this order:
 * 1. expired leases, in every partition (when `rescueExpired`);
 * 2. due runs of exclusive schedules (overlap forbid or skip) in the held partitions, with their
 *    overlap checks (when `checkExclusive`);
 * 3. the common case: due runs of the other schedules, one partition per statement, rotating the
 *    starting one, until the limit is reached. Why per partition: `partition = $1 … ORDER BY
 *    run_after LIMIT n` walks the (partition, run_after) index in order and stops after n rows,
 *    however many are due, while `partition = ANY($parts)` cannot return index order on
 *    PostgreSQL 15: it reads and sorts every due row of those partitions.
 * Splitting them keeps the statement of the top of the hour to what it must do: lock and rewrite
 * the queue row; the expiry and overlap machinery, in the same statement, would cost every run.
 */
export async function claimRunsDetailed(db: Db, opts: ClaimOptions): Promise<Claimed> {
  const out: Claimed = { claimed: [], settled: [], exclusiveFound: 0 };
  if (opts.limit <= 0) return out;
  const left = () => opts.limit - out.claimed.length - out.settled.length;
  const take = (r: { claimed: ClaimedRun[]; settled: ClaimOutcome[] }) => {
    out.claimed.push(...r.claimed);
    out.settled.push(...r.settled);
  };
  // Holding no partition (yet, or any more) must still rescue expired leases: recovery stays within
  // lease + poll interval and never waits for a dead worker's partition leases to change hands.
  if (opts.rescueExpired !== false) take(await rescueExpiredRuns(db, { workerId: opts.workerId, limit: opts.limit, gateMs: opts.rescueGateMs, handlers: opts.handlers }));
  const sweep = async () => {
    if (!opts.sweepUnheld || !opts.handlers || left() <= 0) return;
    if (opts.checkExclusive !== false) take(await claimExclusive(db, opts.workerId, null, left(), opts.handlers));
    if (left() > 0) take(await claimPlain(db, opts.workerId, null, left(), opts.handlers));
  };
  const parts = opts.partitions;
  if (parts !== null && parts.length === 0) {
    await sweep();
    return out;
  }
  if (opts.checkExclusive !== false && left() > 0) {
    const r = await claimExclusive(db, opts.workerId, parts, left(), opts.handlers);
    out.exclusiveFound = r.claimed.length + r.settled.length;
    take(r);
  }
  if (parts === null) {
    if (left() > 0) take(await claimPlain(db, opts.workerId, null, left(), opts.handlers));
    return out;
  }
  const start = rotation++ % parts.length;
  for (let i = 0; i < parts.length && left() > 0; i++) take(await claimPlain(db, opts.workerId, parts[(start + i) % parts.length], left(), opts.handlers));
  await sweep();
  return out;
}
