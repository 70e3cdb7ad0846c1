import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { WORKER_ALIVE_SECONDS } from "../workers/liveness";

/**
 * Partition leases divide the work, they do not make it safe: slot uniqueness (runs_slot_key) and
 * the run's own fencing token (attempts) keep two workers in one partition harmless. The leases
 * make that rare, so each worker ticks and claims only its own partitions and claim statements
 * do not queue behind each other's row locks.
 *
 * A lease is held when `owner = me AND lease_expires_at > sk_now()`; every comparison reads the
 * database clock. The token rises whenever a lease changes hands (never on a renewal), so a
 * holder can tell a partition it kept from one it lost and got back.
 *
 * A partition is ORPHANED when nobody has renewed or taken its lease for
 * PARTITION_ORPHANED_AFTER_SECONDS (its holder died, froze or lost the database; or it is free and
 * nobody took it). Every live worker then ticks and claims there too, whatever it holds, until
 * someone holds it again: a dead worker's pending runs start within a few seconds rather than
 * after its partition lease (15 s) runs out and its workers row (30 s) stops counting it as live.
 * That is safe for the same reason as a hand-over is: pending runs are claimed with SKIP LOCKED
 * and fenced, and a pending run has not started, so taking it early cannot run it twice.
 */

/** How often a holder renews its partition leases (the partitions loop's pass). */
export const PARTITION_RENEW_MS = 1_000;

/**
 * Silence after which a partition is orphaned: three renewal passes missed in a row. Shorter would
 * take over from a live holder stalled for a moment (harmless, but two claimers on one partition);
 * longer would delay every start after a worker dies.
 */
export const PARTITION_ORPHANED_AFTER_SECONDS = 3;

/**
 * The longest a partition's pending runs wait for someone to claim them after its holder's last
 * renewal: the orphan threshold, plus one pass of the other workers' loop to notice it.
 */
export const PARTITION_TAKEOVER_SECONDS = PARTITION_ORPHANED_AFTER_SECONDS + PARTITION_RENEW_MS / 1000;
export type AcquireResult = {
  /** Partitions this worker holds after the pass, ascending. */
  held: number[];
  /** Fencing token of each held partition. */
  tokens: Record<number, number>;
  /** Partition count read from the cluster table. */
  partitions: number;
  /** Live workers counted for the fair share (at least 1: the caller). */
  liveWorkers: number;
  /** ceil(partitions / liveWorkers). */
  share: number;
  /** Partitions taken over (free or expired) in this pass. */
  taken: number[];
  /** Surplus partitions given up in this pass. */
  released: number[];
  /** Partitions not held by this worker whose lease nobody renewed for PARTITION_ORPHANED_AFTER_SECONDS, ascending. */
  orphaned: number[];
};

type Row = { partition: number; token: number };

/**
 * SQL over the partition_leases row `alias`: nobody has renewed or taken its lease for
 * PARTITION_ORPHANED_AFTER_SECONDS. A renewal stamped more than the threshold AHEAD of the clock
 * means the clock was stepped back (tests, a restored server): a live holder re-stamps it within a
 * pass, a dead one never does, so it counts as silent too rather than hiding a dead holder until
 * the clock catches up.
 */
export function silentLease(alias: string): SQL {
  const pl = sql.identifier(alias);
  return sql`(${pl}.renewed_at IS NULL
    OR ${pl}.renewed_at <= sk_now() - make_interval(secs => ${PARTITION_ORPHANED_AFTER_SECONDS})
    OR ${pl}.renewed_at > sk_now() + make_interval(secs => ${PARTITION_ORPHANED_AFTER_SECONDS}))`;
}

/**
 * A holder that has no workers row or has said it stopped cannot be using its lease: its
 * partitions are free at once instead of after the lease (a stopped worker releases them anyway;
 * this covers a row pruned or wiped while a lease still ran).
 */
const ownerGone = (owner: SQL) => sql`NOT EXISTS (SELECT 1 FROM workers w WHERE w.id = ${owner} AND w.stopped_at IS NULL)`;

/**
 * One lease pass for a worker: renew what it holds, give up surplus above its fair share
 * (ceil(P / live workers)), and take free or expired partitions up to that share.
 */
export async function acquirePartitions(db: Db, opts: { workerId: string; leaseSeconds: number }): Promise<AcquireResult> {
  const { workerId: me, leaseSeconds } = opts;
  return db.transaction(async (tx) => {
    const info = await tx.execute<{ partitions: number; live: number }>(sql`
      SELECT c.partitions,
        (SELECT count(*) FROM workers w
          WHERE w.stopped_at IS NULL AND w.id <> ${me}
            AND w.last_heartbeat_at > sk_now() - make_interval(secs => ${WORKER_ALIVE_SECONDS}))::int + 1 AS live
      FROM cluster c WHERE c.id = 1`);
    const partitions = info.rows[0]?.partitions ?? 1;
    const liveWorkers = info.rows[0]?.live ?? 1;
    const share = Math.ceil(partitions / liveWorkers);

    // Lease rows for 0..P-1 exist from the first pass on; rows at or above P (after the count was
    // lowered) are simply never considered again.
    // Only the rows missing (a raised partition count): an insert that meets an existing row waits
    // for any open transaction that wrote it, and a worker cut off mid-pass leaves its transaction
    // open on the server (idle, holding its row locks) until the server gives up on it. Every
    // other worker's pass would wait behind it, holding nothing meanwhile.
    await tx.execute(sql`
      INSERT INTO partition_leases (partition, token)
      SELECT g, 0 FROM generate_series(0, ${partitions - 1}::int) g
      WHERE NOT EXISTS (SELECT 1 FROM partition_leases x WHERE x.partition = g)
      ON CONFLICT (partition) DO NOTHING`);

    // Renew only leases still running: one that expired may already belong to someone else, and
    // if it does not, the take-over below claims it again with a new token.
    const renewed = await tx.execute<Row>(sql`
      UPDATE partition_leases SET lease_expires_at = sk_now() + make_interval(secs => ${leaseSeconds}), renewed_at = sk_now()
      WHERE owner = ${me} AND lease_expires_at > sk_now() AND partition < ${partitions}
      RETURNING partition, token`);
    let held = renewed.rows.map((r) => ({ partition: r.partition, token: Number(r.token) })).sort((a, b) => a.partition - b.partition);

    // A worker joined: give up the highest-numbered surplus at once so it can take them.
    let released: number[] = [];
    if (held.length > share) {
      released = held.slice(share).map((r) => r.partition);
      held = held.slice(0, share);
      await tx.execute(sql`
        UPDATE partition_leases SET owner = NULL, lease_expires_at = NULL
        WHERE owner = ${me} AND partition = ANY(${sql.param(released)}::int[])`);
    }
    // Also drop any stale rows of ours (expired, or above a lowered count).
    await tx.execute(sql`
      UPDATE partition_leases SET owner = NULL, lease_expires_at = NULL
      WHERE owner = ${me} AND (lease_expires_at <= sk_now() OR partition >= ${partitions})`);

    let taken: number[] = [];
    if (held.length < share) {
      // SKIP LOCKED: two workers taking over at once split the free partitions instead of queueing;
      // the outer WHERE re-checks the row each one locked.
      const got = await tx.execute<Row>(sql`
        UPDATE partition_leases pl
        SET owner = ${me}, lease_expires_at = sk_now() + make_interval(secs => ${leaseSeconds}), token = pl.token + 1, renewed_at = sk_now()
        WHERE pl.partition IN (
          SELECT partition FROM partition_leases
          WHERE partition < ${partitions} AND (owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= sk_now() OR ${ownerGone(sql`partition_leases.owner`)})
          ORDER BY partition
          LIMIT ${share - held.length}
          FOR UPDATE SKIP LOCKED)
        AND (pl.owner IS NULL OR pl.lease_expires_at IS NULL OR pl.lease_expires_at <= sk_now() OR ${ownerGone(sql`pl.owner`)})
        RETURNING pl.partition, pl.token`);
      const gotRows = got.rows.map((r) => ({ partition: r.partition, token: Number(r.token) }));
      taken = gotRows.map((r) => r.partition).sort((a, b) => a - b);
      held = [...held, ...gotRows].sort((a, b) => a.partition - b.partition);
    }

    // After this pass's renewals and take-overs: what nobody else is keeping alive either.
    const orphans = await tx.execute<{ partition: number }>(sql`
      SELECT partition FROM partition_leases
      WHERE partition < ${partitions} AND NOT (owner IS NOT DISTINCT FROM ${me} AND lease_expires_at > sk_now())
        AND ${silentLease("partition_leases")}
      ORDER BY partition`);

    return {
      held: held.map((r) => r.partition),
      tokens: Object.fromEntries(held.map((r) => [r.partition, r.token])),
      partitions,
      liveWorkers,
      share,
      taken,
      released,
      orphaned: orphans.rows.map((r) => r.partition),
    };
  });
}

/** Give up every partition lease a worker holds (clean shutdown), so others take them at once. */
export async function releasePartitions(db: Db, workerId: string): Promise<number> {
  const r = await db.execute(sql`
    UPDATE partition_leases SET owner = NULL, lease_expires_at = NULL WHERE owner = ${workerId}`);
  return r.rowCount ?? 0;
}

/** Current holder of every partition, as the database clock sees it (null when free or expired). */
export async function listPartitionLeases(
  db: Db,
): Promise<{ partition: number; owner: string | null; token: number; leaseExpiresAt: Date | null }[]> {
  const r = await db.execute<{ partition: number; owner: string | null; token: number; lease_expires_at: Date | null }>(sql`
    SELECT pl.partition, CASE WHEN pl.lease_expires_at > sk_now() THEN pl.owner END AS owner, pl.token, pl.lease_expires_at
    FROM partition_leases pl, cluster c
    WHERE c.id = 1 AND pl.partition < c.partitions
    ORDER BY pl.partition`);
  return r.rows.map((x) => ({ partition: x.partition, owner: x.owner, token: Number(x.token), leaseExpiresAt: x.lease_expires_at }));
}
