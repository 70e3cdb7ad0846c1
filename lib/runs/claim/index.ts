import type { Db } from "../../db/client";
import type { Claimed, ClaimedRun, ClaimOutcome } from "./answer";
import { claimExclusive } from "./exclusive";
import { claimPlain } from "./plain";
import { rescueExpiredRuns } from "./rescue";
import type { SweepPartition } from "../../partitions/sweep";

// The claim: one module per statement family, as graphile-worker keeps one file per statement.
//   plain.ts      due runs of schedules that allow overlap, one partition per statement (the top of the hour)
//   exclusive.ts  the limited claim: overlap forbid/skip, maxConcurrent, handler limits (one rule, counted under advisory locks)
//   rescue.ts     running runs whose lease expired: taken over, or dead on their final attempt
//   adopt.ts      after a failed claim: runs leased to this worker whose claim's answer was lost
//   answer.ts     what every claim statement returns and how it is decoded into ClaimedRun objects
//   served.ts     routing: the filters that keep a claim to the handlers and queues its worker serves
//                 (which partitions a worker sweeps for runs their holder cannot take: lib/partitions/sweep.ts)
//   take-lease.ts what a claim writes on the queue row it takes (token + 1, the lease)
//   too-late.ts   max lateness: which rows no claim may start, and their record as skipped too_late
export type { Claimed, ClaimedRun, ClaimOutcome } from "./answer";
export { adoptUnansweredClaims } from "./adopt";
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
   * Routing: also claim, after the partitions above, in these partitions, whose holder lacks some
   * of this worker's handlers or queues (lib/partitions/sweep.ts): there, runs of exactly what the
   * holder lacks, one partition per statement in its due order like the held ones. Unset or empty:
   * no sweep (every holder serves what this worker serves).
   */
  sweep?: readonly SweepPartition[] | null;
  /**
   * The queues to claim in and each one's free slots ({ default: 8, reports: 1 }): every queue gets
   * its own statements, each up to its free slots, and `limit` is ignored. Unset: every queue,
   * up to `limit` in all (tests and tools).
   */
  queues?: Readonly<Record<string, number>> | null;
};

/**
 * Claim up to `limit` due runs: running runs whose lease expired, then pending runs whose run_after
 * has passed, skipping rows other workers hold (FOR UPDATE SKIP LOCKED on run_queue, the live part
 * of unfinished runs). No first attempt starts past its slot's max lateness (too-late.ts).
 * Returns only the runs this worker must now execute; overlap and too-late skips and final-attempt
 * expiries are settled on the way (see `claimRunsDetailed`).
 */
export async function claimRuns(db: Db, opts: ClaimOptions): Promise<ClaimedRun[]> {
  const { claimed } = await claimRunsDetailed(db, opts);
  return claimed;
}

/** Where the next multi-partition claim starts, so every held partition gets its turn at the head. */
let rotation = 0;
/** The same for the sweep partitions. */
let sweepRotation = 0;

/**
 * The handlers to claim in a sweep partition, in `queue` (undefined: every queue): in a queue the
 * holder lacks, every handler this worker serves (`served`; null, every handler, is returned as
 * null); otherwise only the handlers the holder lacks, never one this worker does not serve. An
 * empty list: nothing to claim there.
 */
export function sweptHandlers(spot: SweepPartition, served: readonly string[] | null, queue: string | undefined): string[] | null {
  const queueLacking = queue === undefined ? spot.queues.length > 0 : spot.queues.includes(queue);
  if (queueLacking) return served === null ? null : [...served];
  return served === null ? [...spot.handlers] : spot.handlers.filter((h) => served.includes(h));
}

/**
 * `claimRuns`, also reporting the rows it skipped (overlap, too_late) or sent dead (lease expired on the final
 * attempt), and how many runs of exclusive schedules it found (the runner's cue to keep asking).
 *
 * Up to three kinds of statement, each small, in this order:
 * 1. expired leases, in every partition (when `rescueExpired`);
 * 2. due runs of limited schedules and handlers (overlap forbid or skip, maxConcurrent, a handler
 *    limit) in the held partitions, counted under advisory locks (when `checkExclusive`);
 * 3. the common case: due runs of the other schedules, one partition per statement, rotating the
 *    starting one, until the limit is reached. Why per partition: `partition = $1 … ORDER BY
 *    run_after LIMIT n` walks the (partition, run_after) index in order and stops after n rows,
 *    however many are due, while `partition = ANY($parts)` cannot return index order on
 *    PostgreSQL 15: it reads and sorts every due row of those partitions.
 * 4. with slots still free, the sweep partitions (`sweep`): the same per-partition claim, for what
 *    each one's holder lacks of this worker's handlers and queues.
 * Splitting them keeps the statement of the top of the hour to what it must do: lock and rewrite
 * the queue row; the expiry and overlap machinery, in the same statement, would cost every run.
 * With `queues`, steps 2 and 3 run once per queue with free slots, each up to that queue's room.
 */
export async function claimRunsDetailed(db: Db, opts: ClaimOptions): Promise<Claimed> {
  const out: Claimed = { claimed: [], settled: [], exclusiveFound: 0 };
  if (!opts.queues) {
    if (opts.limit <= 0) return out;
    if (opts.rescueExpired !== false) take(out, await rescueExpiredRuns(db, { workerId: opts.workerId, limit: opts.limit, gateMs: opts.rescueGateMs, handlers: opts.handlers }));
    await claimInQueue(db, opts, undefined, opts.limit - out.claimed.length - out.settled.length, out);
    return out;
  }
  const free = Object.entries(opts.queues).filter(([, n]) => n > 0);
  if (free.length === 0) return out;
  // One rescue for every queue with room, at most the smallest room, so no queue takes more than it
  // has (expired leases are rare; what is left waits for the next look).
  if (opts.rescueExpired !== false) {
    const limit = Math.min(...free.map(([, n]) => n));
    take(out, await rescueExpiredRuns(db, { workerId: opts.workerId, limit, gateMs: opts.rescueGateMs, handlers: opts.handlers, queues: free.map(([q]) => q) }));
  }
  for (const [queue, room] of free) {
    const taken = out.claimed.filter((r) => r.queue === queue).length;
    await claimInQueue(db, opts, queue, room - taken, out);
  }
  return out;
}

function take(out: Claimed, r: { claimed: ClaimedRun[]; settled: ClaimOutcome[] }) {
  out.claimed.push(...r.claimed);
  out.settled.push(...r.settled);
}

/** Claim up to `limit` runs of one queue (or, with undefined, of every queue) into `out`. */
async function claimInQueue(db: Db, opts: ClaimOptions, queue: string | undefined, limit: number, out: Claimed): Promise<void> {
  let got = 0;
  const left = () => limit - got;
  const add = (r: Claimed) => {
    got += r.claimed.length + r.settled.length;
    take(out, r);
    return r;
  };
  const sweep = async () => {
    const spots = opts.sweep;
    if (!spots || spots.length === 0 || left() <= 0) return;
    // Limited runs are few: one statement over every sweep partition, for any handler this worker
    // serves (where the holder serves it too, the two share it through SKIP LOCKED).
    if (opts.checkExclusive !== false) add(await claimExclusive(db, opts.workerId, spots.map((p) => p.partition), left(), opts.handlers, queue));
    const start = sweepRotation++ % spots.length;
    for (let i = 0; i < spots.length && left() > 0; i++) {
      const spot = spots[(start + i) % spots.length];
      const handlers = sweptHandlers(spot, opts.handlers ?? null, queue);
      if (handlers === null || handlers.length > 0) add(await claimPlain(db, opts.workerId, spot.partition, left(), handlers, queue));
    }
  };
  if (limit <= 0) return;
  const parts = opts.partitions;
  if (parts !== null && parts.length === 0) {
    await sweep();
    return;
  }
  if (opts.checkExclusive !== false) {
    const r = add(await claimExclusive(db, opts.workerId, parts, left(), opts.handlers, queue));
    out.exclusiveFound += r.claimed.length + r.settled.length;
  }
  if (parts === null) {
    if (left() > 0) add(await claimPlain(db, opts.workerId, null, left(), opts.handlers, queue));
    return;
  }
  const start = rotation++ % parts.length;
  for (let i = 0; i < parts.length && left() > 0; i++) add(await claimPlain(db, opts.workerId, parts[(start + i) % parts.length], left(), opts.handlers, queue));
  await sweep();
}
