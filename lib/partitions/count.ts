import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/**
 * Changing the partition count, and what happens when it changes:
 *
 * The count lives in the cluster table, so web and workers always agree on it. A change gives every
 * schedule its partition under the new count by the same rule a new schedule gets it
 * (sk_partition_of, lib/db/sql/functions/sk_partition_of.sql), and the unfinished runs (their queue
 * rows, and the records of pending and dead ones) follow, in one transaction; finished runs keep
 * their old number, which nothing reads.
 * Workers read the new count on their next lease pass (within lease/3): leases on partitions at or
 * above the new count are dropped and the fair share is recomputed, so the cluster converges
 * within a few lease periods. Until then a worker may tick or claim with its old set; that is safe
 * (slot uniqueness and run fencing), only briefly uneven. It is an operator action for a quiet
 * moment: it rewrites every schedule row whose partition changes.
 */
export async function getPartitionCount(db: Db): Promise<number> {
  const r = await db.execute<{ partitions: number }>(sql`SELECT partitions FROM cluster WHERE id = 1`);
  return r.rows[0]?.partitions ?? 16;
}

/** Set the cluster's partition count and move schedules and unfinished runs to their new partitions; no-op when unchanged. */
export async function setPartitionCount(db: Db, partitions: number): Promise<{ changed: boolean; schedules: number; runs: number }> {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  return db.transaction(async (tx) => {
    const cur = await tx.execute<{ partitions: number }>(sql`SELECT partitions FROM cluster WHERE id = 1 FOR UPDATE`);
    if (cur.rows[0]?.partitions === partitions) return { changed: false, schedules: 0, runs: 0 };
    await tx.execute(sql`
      INSERT INTO cluster (id, partitions) VALUES (1, ${partitions})
      ON CONFLICT (id) DO UPDATE SET partitions = excluded.partitions`);
    const s = await tx.execute(sql`
      UPDATE schedules SET partition = sk_partition_of(id, ${partitions}) WHERE partition <> sk_partition_of(id, ${partitions})`);
    // The claim reads the queue's partition; the record's copy of an unfinished run follows it.
    const r = await tx.execute(sql`
      UPDATE run_queue SET partition = sk_partition_of(schedule_id, ${partitions})
      WHERE partition <> sk_partition_of(schedule_id, ${partitions})`);
    await tx.execute(sql`
      UPDATE runs SET partition = sk_partition_of(schedule_id, ${partitions})
      WHERE state IN ('pending', 'dead') AND partition <> sk_partition_of(schedule_id, ${partitions})`);
    return { changed: true, schedules: s.rowCount ?? 0, runs: r.rowCount ?? 0 };
  });
}

