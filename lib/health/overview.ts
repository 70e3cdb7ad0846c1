import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { getScheduleHealth, scheduleHealthSchema } from "./schedule-health";
import { WORKER_ALIVE_SECONDS } from "../workers/liveness";
import { getFleetSummary, statusCountsSchema, waitHistogramSchema } from "./fleet-summary";

/**
 * Counts for the Overview header. The schedule counts are the alert pass's, like the counts by
 * status (`schedules`: the live schedules it judged plus those not evaluated yet; `paused`: those it
 * found paused), so no count reads every schedule; the run counts read run_queue's partial indexes
 * (unfinished runs only, never the history).
 */
export const overviewTotalsSchema = z
  .object({
    schedules: z.number().int(),
    paused: z.number().int(),
    workersAlive: z.number().int(),
    pending: z.number().int(),
    running: z.number().int(),
    dead: z.number().int(),
    /** The database clock (sk_now()). */
    now: z.string(),
  })
  .strict();
export type OverviewTotals = z.infer<typeof overviewTotalsSchema>;

export { WORKER_ALIVE_SECONDS };

/** The header counts that are not about schedules: live workers and unfinished runs, exact and cheap. */
export type RunTotals = Omit<OverviewTotals, "schedules" | "paused">;

/** Workers alive and unfinished runs by state (run_queue's partial indexes), with the database clock. */
export async function getRunTotals(db: Pick<Db, "execute">): Promise<RunTotals> {
  const r = await db.execute<{ workers_alive: number; pending: number; running: number; dead: number; now: Date }>(sql`
    SELECT
      (SELECT count(*) FROM workers WHERE stopped_at IS NULL
         AND last_heartbeat_at > sk_now() - make_interval(secs => ${WORKER_ALIVE_SECONDS}))::int AS workers_alive,
      (SELECT count(*) FROM run_queue WHERE state = 'pending')::int AS pending,
      (SELECT count(*) FROM run_queue WHERE state = 'running')::int AS running,
      (SELECT count(*) FROM run_queue WHERE state = 'dead')::int AS dead,
      sk_now() AS now`);
  const row = r.rows[0];
  return { workersAlive: row.workers_alive, pending: row.pending, running: row.running, dead: row.dead, now: new Date(row.now).toISOString() };
}

/** One schedule's row on the Overview: what it runs, when, and its health. */
export const overviewScheduleSchema = scheduleHealthSchema
  .extend({
    id: z.number().int(),
    name: z.string(),
    handler: z.string(),
    cron: z.string().nullable(),
    everySeconds: z.number().int().nullable(),
    timezone: z.string(),
    catchUp: z.enum(["skip", "latest", "all"]),
    enabled: z.boolean(),
  })
  .strict();
export type OverviewSchedule = z.infer<typeof overviewScheduleSchema>;

/** These schedules, in this order, each with its health (ids of deleted or unknown schedules are left out). */
export async function overviewSchedulesByIds(db: Db, ids: number[]): Promise<OverviewSchedule[]> {
  if (ids.length === 0) return [];
  const r = await db.execute<{
    id: number;
    name: string;
    handler: string;
    cron: string | null;
    every_seconds: number | null;
    timezone: string;
    catch_up: OverviewSchedule["catchUp"];
    enabled: boolean;
  }>(sql`
    SELECT id, name, handler, cron, every_seconds, timezone, catch_up, enabled
    FROM schedules WHERE deleted_at IS NULL AND id = ANY(${sql.param(ids)}::bigint[])`);
  const byId = new Map(r.rows.map((s) => [Number(s.id), s]));
  const health = await getScheduleHealth(db, ids);
  return ids.flatMap((id) => {
    const s = byId.get(id);
    const h = health.get(id);
    if (!s || !h) return [];
    return [{ id, name: s.name, handler: s.handler, cron: s.cron, everySeconds: s.every_seconds, timezone: s.timezone, catchUp: s.catch_up, enabled: s.enabled, ...h }];
  });
}

/** The Overview's answer: header totals, counts by status (as of the last alert pass), the two worst-50 lists and the due runs' waits. */
export const overviewSummarySchema = z
  .object({
    totals: overviewTotalsSchema,
    /** Live schedules by status as the last alert pass judged them (not evaluated yet: `notEvaluated`). */
    statusCounts: statusCountsSchema,
    /** The database clock reading the counts are as of: the start of the last finished alert pass; null before the first. */
    statusAsOf: z.string().nullable(),
    /** Live schedules no alert pass has judged yet (made since the last one): in no status count. */
    notEvaluated: z.number().int(),
    /** The 50 longest since their last success (never succeeded first), worst first. */
    worstSinceLastSuccess: z.array(overviewScheduleSchema),
    /** The 50 whose oldest due pending run has waited longest, worst first. */
    worstOldestPending: z.array(overviewScheduleSchema),
    pendingWait: waitHistogramSchema,
  })
  .strict();
export type OverviewSummary = z.infer<typeof overviewSummarySchema>;

export async function getOverview(db: Db): Promise<OverviewSummary> {
  const [runs, summary] = await Promise.all([getRunTotals(db), getFleetSummary(db)]);
  const judged = Object.values(summary.statusCounts).reduce((a, n) => a + n, 0);
  const totals: OverviewTotals = { schedules: judged + summary.notEvaluated, paused: summary.statusCounts.paused, ...runs };
  const [worstSinceLastSuccess, worstOldestPending] = await Promise.all([
    overviewSchedulesByIds(db, summary.worstSinceLastSuccess),
    overviewSchedulesByIds(db, summary.worstOldestPending),
  ]);
  return {
    totals,
    statusCounts: summary.statusCounts,
    statusAsOf: summary.statusAsOf?.toISOString() ?? null,
    notEvaluated: summary.notEvaluated,
    worstSinceLastSuccess,
    worstOldestPending,
    pendingWait: summary.pendingWait,
  };
}
