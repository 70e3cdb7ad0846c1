/**
 * The Overview's summary of the whole fleet, in one statement whose cost is one pass over the
 * schedules (with their stored last success, schedule_last_success) and over the queue's dead and
 * due pending rows in SQL, and nothing per schedule in JavaScript: counts by status, the worst 50 by
 * since-last-success (a walk of schedule_last_success_order_idx that stops after 50) and by oldest
 * pending, and how long the due runs have waited (a histogram).
 *
 * The status is the one of lib/health/schedule-health.ts (deriveStatus), evaluated in SQL: paused,
 * failing (a dead run), late ((since last success, or age when it never succeeded) > the late
 * threshold), backlogged (oldest due pending > the backlog threshold), healthy. The thresholds need
 * a cron's typical gap, which needs the cron maths: it is worked out here once per distinct
 * (cron, time zone) in the fleet and handed to SQL as a table. fleet-summary.test.ts checks the
 * counts against deriveStatus itself on every schedule of a seeded fleet.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { LATENESS_BUCKETS } from "../metrics/worker-metrics";
import { lastSuccessFrom, lastSuccessId, lastSuccessKey } from "../schedules/last-success";
import { DEFAULT_LATE_GRACE_SECONDS, gapSeconds, HEALTH_STATUSES, MIN_BACKLOG_AFTER_SECONDS, type HealthStatus } from "./schedule-health";

export const WORST_LIST_SIZE = 50;

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
  statusCounts: StatusCounts;
  /** Ids, worst first: never succeeded (by id), then the oldest last success (lib/schedules/last-success.ts). */
  worstSinceLastSuccess: number[];
  /** Ids, worst first: the oldest due pending run's slot. */
  worstOldestPending: number[];
  pendingWait: WaitHistogram;
};

export async function getFleetSummary(db: Pick<Db, "execute">): Promise<FleetSummary> {
  const clock = await db.execute<{ now: string }>(sql`SELECT sk_now()::text AS now`);
  const nowText = clock.rows[0].now;
  const now = new Date(nowText);
  const timings = await db.execute<{ cron: string; timezone: string }>(sql`
    SELECT DISTINCT cron, timezone FROM schedules WHERE deleted_at IS NULL AND cron IS NOT NULL`);
  const crons = timings.rows.map((t) => t.cron);
  const zones = timings.rows.map((t) => t.timezone);
  // A cron that never fires again has no gap: null, so neither threshold is ever passed (Infinity).
  const gaps = timings.rows.map((t) => {
    const g = gapSeconds({ enabled: true, cron: t.cron, everySeconds: null, timezone: t.timezone, lateAfterSeconds: null, lateGraceSeconds: null, backlogAfterSeconds: null }, now);
    return Number.isFinite(g) ? g : null;
  });
  const bounds = LATENESS_BUCKETS;
  const r = await db.execute<{ counts: Record<string, number> | null; worst_success: number[] | null; worst_pending: number[] | null; wait: number[] | null }>(sql`
    WITH c AS (SELECT ${nowText}::timestamptz AS now),
    g AS (SELECT * FROM unnest(${sql.param(crons)}::text[], ${sql.param(zones)}::text[], ${sql.param(gaps)}::float8[]) AS g(cron, timezone, gap)),
    dead AS (SELECT DISTINCT schedule_id FROM run_queue WHERE state = 'dead'),
    op AS (
      SELECT q.schedule_id, min(q.scheduled_for) AS scheduled_for FROM run_queue q, c
      WHERE q.state = 'pending' AND q.scheduled_for <= c.now GROUP BY q.schedule_id),
    -- Each schedule's status, streamed into the counts: nothing is kept per schedule (a
    -- materialised row per schedule spilled to disk at 200,000), and the ages are date_part's
    -- float8, not extract's numeric, which cost most of the pass.
    st AS (
      SELECT CASE WHEN NOT s.enabled THEN 'paused' WHEN d.schedule_id IS NOT NULL THEN 'failing'
          WHEN coalesce(date_part('epoch', c.now - ls.last_success_at), greatest(0, date_part('epoch', c.now - s.created_at)))
            > coalesce(s.late_after_seconds, 2 * coalesce(s.every_seconds, g.gap) + coalesce(s.late_grace_seconds, ${DEFAULT_LATE_GRACE_SECONDS})) THEN 'late'
          WHEN date_part('epoch', c.now - op.scheduled_for)
            > coalesce(s.backlog_after_seconds, greatest(coalesce(s.every_seconds, g.gap), ${MIN_BACKLOG_AFTER_SECONDS})) THEN 'backlogged'
          ELSE 'healthy' END AS status
      FROM c CROSS JOIN schedules s
      LEFT JOIN schedule_last_success ls ON ls.schedule_id = s.id
      LEFT JOIN g ON g.cron = s.cron AND g.timezone = s.timezone
      LEFT JOIN dead d ON d.schedule_id = s.id
      LEFT JOIN op ON op.schedule_id = s.id
      WHERE s.deleted_at IS NULL)
    SELECT
      (SELECT json_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM st GROUP BY 1) q) AS counts,
      (SELECT json_agg(id ORDER BY k, id) FROM (
        SELECT s.id, ${lastSuccessKey} AS k FROM ${lastSuccessFrom} WHERE s.deleted_at IS NULL
        ORDER BY ${lastSuccessKey}, ${lastSuccessId} LIMIT ${WORST_LIST_SIZE}) q) AS worst_success,
      (SELECT json_agg(id ORDER BY pending_since, id) FROM (
        SELECT s.id, op.scheduled_for AS pending_since FROM op JOIN schedules s ON s.id = op.schedule_id
        WHERE s.deleted_at IS NULL ORDER BY op.scheduled_for, s.id LIMIT ${WORST_LIST_SIZE}) q) AS worst_pending,
      (SELECT array_agg(n ORDER BY b) FROM (
        SELECT b, count(q.run_id)::int AS n
        FROM generate_series(0, ${bounds.length}) AS b
        LEFT JOIN (
          SELECT p.run_id, width_bucket(greatest(0, date_part('epoch', c.now - p.scheduled_for)), ${sql.param(bounds)}::float8[]) AS wb
          FROM run_queue p, c WHERE p.state = 'pending' AND p.scheduled_for <= c.now) q ON q.wb = b
        GROUP BY b) h) AS wait`);
  const row = r.rows[0];
  const statusCounts = Object.fromEntries(HEALTH_STATUSES.map((s) => [s, Number(row.counts?.[s] ?? 0)])) as StatusCounts;
  // width_bucket: 0 below the first bound, i for [bounds[i-1], bounds[i]), n from the last bound on.
  const wait = (row.wait ?? []).map(Number);
  return {
    statusCounts,
    worstSinceLastSuccess: (row.worst_success ?? []).map(Number),
    worstOldestPending: (row.worst_pending ?? []).map(Number),
    pendingWait: [...bounds.map((below, i) => ({ below, count: wait[i] ?? 0 })), { below: null, count: wait[bounds.length] ?? 0 }],
  };
}
