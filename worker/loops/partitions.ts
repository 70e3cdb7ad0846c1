import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { acquirePartitions, PARTITION_RENEW_MS, releasePartitions } from "../../lib/partitions/leases";
import { setPartitionCount } from "../../lib/partitions/count";
import { listSweepPartitions, type SweepPartition } from "../../lib/partitions/sweep";
import { startLoop } from "./loop";

/** Partition lease length: a dead worker's partitions change hands at most this long after it stopped renewing. */
export const PARTITION_LEASE_SECONDS_DEFAULT = 15;
/**
 * A lease pass every second (at most lease/3): renewals have many chances before the lease ends,
 * a holder gives its surplus to a joining worker within about a second, and a silent holder's
 * partitions are seen orphaned within a second of PARTITION_ORPHANED_AFTER_SECONDS. A pass is a
 * few small statements on a table of P rows.
 */
export const PARTITION_PASS_MS_DEFAULT = PARTITION_RENEW_MS;
/** A change of the sweep list is logged at info at most this often (debug in between). */
const SWEEP_INFO_EVERY_MS = 60_000;
/** At start, wait at most this long to hold at least one partition (a holder releases surplus on its next pass). */
export const PARTITION_READY_TIMEOUT_MS = 3_000;

export type PartitionsLoopOptions = {
  db: Db;
  workerId: string;
  log: Logger;
  leaseSeconds?: number;
  /** Stop using a lease this long before it would expire, measured on this process's monotonic clock. */
  safetyMarginMs?: number;
  /** When set (SLOTKEEPER_PARTITIONS given explicitly), apply this partition count before the first pass. */
  applyPartitionCount?: number;
  /** Called when the partitions held, or the orphaned ones, changed (e.g. to wake the claim loop). */
  onChange?: (held: number[]) => void;
};

export type PartitionsLoop = {
  /** Partitions this worker may tick and claim in right now ([] until the first pass, or once the last renewal's lease is near its end). */
  held: () => number[];
  /**
   * Partitions nobody has renewed for PARTITION_ORPHANED_AFTER_SECONDS, as of the last pass (never
   * ones this worker holds): it ticks and claims there too until someone holds them. [] while
   * held() is (this worker cannot tell).
   */
  orphaned: () => number[];
  /**
   * Partitions held by a live worker that lacks some of this worker's handlers or queues, as of the
   * last pass (lib/partitions/sweep.ts): it claims there what the holder cannot. [] while held() is.
   */
  sweep: () => SweepPartition[];
  /** Settles once this worker holds a partition, a pass failed, or PARTITION_READY_TIMEOUT_MS passed, so it starts claiming with its share. */
  ready: Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Hold a fair share of partition leases: acquire on start, renew every second, and answer `held()`
 * from the last successful pass only while its lease is safely unexpired on the monotonic clock.
 *
 * A failed renewal (a cut connection, a statement timeout) changes nothing: what the last
 * successful pass held stays in use until that lease's safe end. The leases are still this
 * worker's in the database, so nobody else would claim there before they expire or are seen
 * orphaned (3 s without a renewal); dropping them at the first error left their due runs waiting
 * for that. Holding a partition decides only who ticks and claims where: the unique slot key,
 * SKIP LOCKED and the fencing token keep a run single however many workers claim in a partition.
 */
export function startPartitionsLoop(opts: PartitionsLoopOptions): PartitionsLoop {
  const leaseSeconds = opts.leaseSeconds ?? PARTITION_LEASE_SECONDS_DEFAULT;
  const marginMs = Math.min(opts.safetyMarginMs ?? 2_000, (leaseSeconds * 1000) / 3);
  let current: number[] = [];
  let orphans: number[] = [];
  let sweep: SweepPartition[] = [];
  let lastSweepInfoAt = -Infinity;
  // Deadline on performance.now(), counted from when the renewal was sent, not when it answered:
  // a slow answer can only shorten the time the worker believes it holds its partitions.
  let usableUntil = 0;
  let countApplied = opts.applyPartitionCount === undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const readyBy = performance.now() + PARTITION_READY_TIMEOUT_MS;

  const loop = startLoop({
    name: "partitions:lease",
    intervalMs: Math.max(100, Math.min(PARTITION_PASS_MS_DEFAULT, Math.floor((leaseSeconds * 1000) / 3))),
    log: opts.log,
    run: async () => {
      try {
        await pass();
        if (current.length > 0 || performance.now() >= readyBy) markReady();
      } catch (err) {
        markReady();
        throw err;
      }
    },
  });

  async function pass() {
    if (!countApplied) {
      const r = await setPartitionCount(opts.db, opts.applyPartitionCount!);
      if (r.changed) opts.log.info({ event: "partitions:count:changed", partitions: opts.applyPartitionCount, ...r });
      countApplied = true;
    }
    const sentAt = performance.now();
    const result = await acquirePartitions(opts.db, { workerId: opts.workerId, leaseSeconds });
    const sweepBefore = sweep.map((p) => `${p.partition}:${p.handlers}:${p.queues}`).join(" ");
    // What the holders of the others lack: a failure here keeps the leases just renewed in use.
    sweep = await listSweepPartitions(opts.db, opts.workerId, result.partitions).catch((err) => {
      opts.log.warn({ event: "partitions:sweep:error", err });
      return sweep;
    });
    const sweepChanged = sweepBefore !== sweep.map((p) => `${p.partition}:${p.handlers}:${p.queues}`).join(" ");
    if (sweepChanged) {
      // A holder at its concurrency enters and leaves the list as its runs end and start, up to
      // every heartbeat: the first change in a minute is info, the rest debug.
      const quiet = sentAt - lastSweepInfoAt < SWEEP_INFO_EVERY_MS;
      if (!quiet) lastSweepInfoAt = sentAt;
      opts.log[quiet ? "debug" : "info"]({ event: "partitions:sweep", sweep });
    }
    const before = `${current.join(",")}/${orphans.join(",")}`;
    current = result.held;
    orphans = result.orphaned;
    usableUntil = sentAt + leaseSeconds * 1000 - marginMs;
    if (result.taken.length || result.released.length) {
      opts.log.info({ event: "partitions:lease:changed", held: result.held, taken: result.taken, released: result.released, share: result.share, liveWorkers: result.liveWorkers });
    }
    if (result.orphaned.length > 0 && before.split("/")[1] !== orphans.join(",")) {
      opts.log.info({ event: "partitions:orphaned", orphaned: orphans });
    }
    if (sweepChanged || before !== `${current.join(",")}/${orphans.join(",")}`) opts.onChange?.(current);
  }

  return {
    held: () => (performance.now() < usableUntil ? current : []),
    orphaned: () => (performance.now() < usableUntil ? orphans : []),
    sweep: () => (performance.now() < usableUntil ? sweep : []),
    ready,
    stop: async () => {
      await loop.stop();
      current = [];
      orphans = [];
      sweep = [];
      usableUntil = 0;
      await releasePartitions(opts.db, opts.workerId).catch((err) => opts.log.warn({ event: "partitions:release:error", err }));
    },
  };
}
