/**
 * The Overview's summary of the whole fleet, at a cost that follows what is wrong or waiting, not
 * the number of schedules: counts by status as the alert pass last judged them (a few rows,
 * lib/health/status-counts.ts), the worst 50 by since-last-success (a walk of
 * schedule_last_success_order_idx that stops after 50) and by oldest pending (a walk of
 * run_queue_waiting_idx that stops), and how long the due runs have waited (an index-only count
 * of that index's due range).
 *
 * The status is the one of lib/health/schedule-health.ts (deriveStatus): paused, failing (a dead
 * run), late ((since last success, or age when it never succeeded) > the late threshold),
 * backlogged (oldest due pending > the backlog threshold), healthy. The counts say as of when
 * (`statusAsOf`), and how many schedules no pass has judged yet (`notEvaluated`).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { LATENESS_BUCKETS } from "../metrics/worker-metrics";
import { lastSuccessFrom, lastSuccessId, lastSuccessKey } from "../schedules/last-success";
import { HEALTH_STATUSES, type HealthStatus } from "./schedule-health";
import { readStatusCounts } from "./status-counts";

export const WORST_LIST_SIZE = 50;

/**
 * How many of the oldest waiting runs the oldest-pending list walks. A schedule with many waiting
 * runs is met once per run, so when the oldest 5,000 waiting runs belong to fewer than
 * 50 live schedules the list is shorter; it is never out of order.
 */
export const PENDING_WALK = 5_000;

export const statusCountsSchema = z.object(Object.fromEntries(HEALTH_STATUSES.map((s) => [s, z.number().int()])) as Record<HealthStatus, z.ZodNumber>).strict();
export type StatusCounts = z.infer<typeof statusCountsSchema>;

/**
 * Due pending runs by how long they have waited since their slot: each bucket counts waits from the
 * previous bucket's `below` (0 for the first) up to, not including, its own; `below` null is the
 * rest. Counts are per bucket, not cumulative.
 */
export const waitHistogramSchema = z.array(z.object({ below: z.number().nullable(), count: z.number().int() }).strict());
export type WaitHistogram = z.infer<typeof waitHistogramSchema>;

export type FleetSummary = {
  /** Live schedules by status, as the last alert pass judged them. */
  statusCounts: StatusCounts;
  /** The database clock reading the counts are as of (the last finished alert pass); null before the first. */
  statusAsOf: Date | null;
  /** Live schedules no alert pass has judged yet: counted under no status. */
  notEvaluated: number;
  /** Ids, worst first: never succeeded (by id), then the oldest last success (lib/schedules/last-success.ts). */
  worstSinceLastSuccess: number[];
  /** Ids, worst first: the oldest due pending run's slot. */
  worstOldestPending: number[];
  pendingWait: WaitHistogram;
};

export async function getFleetSummary(db: Pick<Db, "execute">): Promise<FleetSummary> {
  const clock = await db.execute<{ now: string }>(sql`SELECT sk_now()::text AS now`);
  const nowText = clock.rows[0].now;
  const bounds = LATENESS_BUCKETS;
  const [counts, r] = await Promise.all([
    readStatusCounts(db),
    db.execute<{ worst_success: number[] | null; worst_pending: number[] | null; wait: number[] | null }>(sql`
    WITH c AS (SELECT ${nowText}::timestamptz AS now)
    SELECT
      (SELECT json_agg(id ORDER BY k, id) FROM (
        SELECT s.id, ${lastSuccessKey} AS k FROM ${lastSuccessFrom} WHERE s.deleted_at IS NULL
        ORDER BY ${lastSuccessKey}, ${lastSuccessId} LIMIT ${WORST_LIST_SIZE}) q) AS worst_success,
      -- The oldest waiting runs in slot order (run_queue_waiting_idx), at most PENDING_WALK of
      -- them: the first schedules met in that order are the ones whose oldest due pending run is
      -- oldest, each then looked up until 50 are live (a scalar subquery stays a per-row probe).
      (SELECT json_agg(id ORDER BY pending_since, id) FROM (
        SELECT o.schedule_id AS id, o.pending_since
        FROM (
          SELECT w.schedule_id, min(w.scheduled_for) AS pending_since FROM (
            SELECT q.schedule_id, q.scheduled_for FROM run_queue q, c
            WHERE q.state = 'pending' AND q.scheduled_for <= c.now
            ORDER BY q.scheduled_for, q.schedule_id LIMIT ${PENDING_WALK}) w
          GROUP BY w.schedule_id ORDER BY pending_since, w.schedule_id) o
        WHERE (SELECT s.deleted_at IS NULL FROM schedules s WHERE s.id = o.schedule_id)
        LIMIT ${WORST_LIST_SIZE}) q) AS worst_pending,
      -- Every due pending run, counted by wait: an index-only range of run_queue_waiting_idx.
      (SELECT array_agg(coalesce(q.n, 0) ORDER BY b)
        FROM generate_series(0, ${bounds.length}) AS b
        LEFT JOIN (
          SELECT width_bucket(greatest(0, date_part('epoch', c.now - p.scheduled_for)), ${sql.param(bounds)}::float8[]) AS wb, count(*)::int AS n
          FROM run_queue p, c WHERE p.state = 'pending' AND p.scheduled_for <= c.now GROUP BY 1) q ON q.wb = b) AS wait`),
  ]);
  const row = r.rows[0];
  const statusCounts = Object.fromEntries(HEALTH_STATUSES.map((s) => [s, 0])) as StatusCounts;
  for (const e of counts.byStatusHandler) statusCounts[e.status] += e.count;
  // width_bucket: 0 below the first bound, i for [bounds[i-1], bounds[i]), n from the last bound on.
  const wait = (row.wait ?? []).map(Number);
  return {
    statusCounts,
    statusAsOf: counts.asOf,
    notEvaluated: counts.notEvaluated,
    worstSinceLastSuccess: (row.worst_success ?? []).map(Number),
    worstOldestPending: (row.worst_pending ?? []).map(Number),
    pendingWait: [...bounds.map((below, i) => ({ below, count: wait[i] ?? 0 })), { below: null, count: wait[bounds.length] ?? 0 }],
  };
}
