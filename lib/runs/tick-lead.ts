import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/**
 * How far ahead of the clock the tick has materialised the given partitions (null = all): the
 * earliest next_slot_at of an enabled, live schedule there, less sk_now(), in seconds; every slot
 * before that instant is a run already. Null when no schedule there is enabled (nothing to
 * materialise). One probe of schedules_tick_idx (partition, next_slot_at) per partition.
 */
export async function materialisedLeadSeconds(db: Db, partitions: number[] | null): Promise<number | null> {
  const earliest =
    partitions === null
      ? sql`SELECT min(s.next_slot_at) AS next FROM schedules s WHERE s.enabled AND s.deleted_at IS NULL`
      : sql`SELECT min(x.next) AS next FROM unnest(${sql.param(partitions)}::int[]) AS p(partition)
          CROSS JOIN LATERAL (SELECT s.next_slot_at AS next FROM schedules s
            WHERE s.partition = p.partition AND s.enabled AND s.deleted_at IS NULL ORDER BY s.next_slot_at LIMIT 1) x`;
  const { rows } = await db.execute<{ lead: number | null }>(sql`SELECT date_part('epoch', e.next - sk_now())::float8 AS lead FROM (${earliest}) e`);
  return rows[0]?.lead ?? null;
}

/**
 * While the workers are backlogged (their claims come back full), the tick leaves materialising to
 * later as long as it is at least this share of its horizon ahead: at the top of the hour its
 * inserts and schedule advances share the cores with the claims and finishes of the runs already
 * due, and every slot it would write is not due for at least that long. Below it, it ticks as
 * always, backlog or not.
 */
export const TICK_DEFER_LEAD_SHARE = 0.5;

/** Whether a backlogged worker's tick may leave materialising to later: its lead is at least TICK_DEFER_LEAD_SHARE of the horizon. */
export async function mayDeferMaterialising(db: Db, partitions: number[] | null, horizonSeconds: number): Promise<boolean> {
  if (partitions !== null && partitions.length === 0) return true;
  const lead = await materialisedLeadSeconds(db, partitions);
  return lead === null || lead >= horizonSeconds * TICK_DEFER_LEAD_SHARE;
}
