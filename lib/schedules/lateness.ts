import { configDefaults } from "../config";
import { PARTITION_TAKEOVER_SECONDS } from "../partitions/leases";

/**
 * A schedule's stated worst-case start lateness, in seconds from the slot:
 *
 *   jitter + 2 × poll interval + max(lease, PARTITION_TAKEOVER_SECONDS = 4)
 *
 * It holds when workers die (kill -9), freeze (SIGSTOP, GC pauses), lose their connections or
 * restart in a loop, as long as the workers that are left have a free slot (capacity) and the
 * database is up:
 * - normally a slot's first attempt starts within one poll interval of its due time (slot +
 *   jitter), sooner with the claim loop's wake at the next due instant;
 * - when the worker holding its partition dies or freezes, the partition is orphaned after 3 s
 *   without a renewal and every other worker sees that within its next lease pass (1 s) and
 *   claims there: at most a poll interval (the holder's own claim it never made) + 4 s late;
 * - when a worker dies after claiming it, the lease runs out and the next poll takes it over: the
 *   attempt that does the work starts at most poll (the claim) + lease + poll late.
 * The second poll interval also covers a pass lost to a cut connection (a failed pass waits two
 * intervals). So the poll interval alone can make a run up to one interval late, and a dead
 * worker adds up to the run's lease.
 *
 * worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: 30 }, 5000) === 40
 * worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: 4 }, 250) === 5
 */
export function worstCaseLatenessSeconds(
  s: { jitterSeconds: number; leaseSeconds: number },
  pollIntervalMs: number = configDefaults.pollIntervalMs,
): number {
  return Math.ceil(s.jitterSeconds + (2 * pollIntervalMs) / 1000 + Math.max(s.leaseSeconds, PARTITION_TAKEOVER_SECONDS));
}

/**
 * What a database outage adds to worstCaseLatenessSeconds: its own length (nothing starts while
 * PostgreSQL is down) plus up to this many seconds, the longest a worker's loops wait between
 * retries (their back-off doubles from the poll interval up to configDefaults.loopMaxBackoffMs).
 */
export const DATABASE_OUTAGE_ALLOWANCE_SECONDS = configDefaults.loopMaxBackoffMs / 1000;
