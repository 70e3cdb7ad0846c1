/**
 * The order "longest since its last success first": schedules that never succeeded first (their
 * last success reads as -infinity), then the oldest last success, the id breaking ties. The stored
 * last success is schedule_last_success (one row per schedule, kept by the triggers
 * lib/db/sql/triggers/*_last_success_*.sql). The key is exactly the first column of
 * schedule_last_success_order_idx (lib/db/schema.ts) and the id its second, so a walk in this
 * order from `lastSuccessFrom` is an index walk that stops after a page: the list's lastSuccess
 * sort and the Overview's worst 50 both use it, and a keyset cursor compares (key, id) as a row.
 */
import { sql, type SQL } from "drizzle-orm";

/** The schedules `s` with their last success `l`, in the order the index keeps. */
export const lastSuccessFrom: SQL = sql`schedule_last_success l JOIN schedules s ON s.id = l.schedule_id`;

/** The sort key (the index's expression: it names the column of `l`, no table). */
export const lastSuccessKey: SQL = sql`coalesce(l.last_success_at, '-infinity'::timestamptz)`;

/** The tie-break that goes with the key: the index's second column. */
export const lastSuccessId: SQL = sql`l.schedule_id`;
