import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { getScheduleHealth, type ScheduleHealth } from "./schedule-health";
import { WORKER_ALIVE_SECONDS } from "../workers/liveness";

/** Counts for the Overview header; the run counts read run_queue's partial indexes (unfinished runs only, never the history). */
export type OverviewTotals = {
  schedules: number;
  paused: number;
  workersAlive: number;
  pending: number;
  running: number;
  dead: number;
  now: string;
};

export { WORKER_ALIVE_SECONDS };

export async function getOverviewTotals(db: Db): Promise<OverviewTotals> {
  const r = await db.execute<{
    schedules: number;
    paused: number;
    workers_alive: number;
    pending: number;
    running: number;
    dead: number;
    now: Date;
  }>(sql`
    SELECT
      (SELECT count(*) FROM schedules WHERE deleted_at IS NULL)::int AS schedules,
      (SELECT count(*) FROM schedules WHERE deleted_at IS NULL AND NOT enabled)::int AS paused,
      (SELECT count(*) FROM workers WHERE stopped_at IS NULL
         AND last_heartbeat_at > sk_now() - make_interval(secs => ${WORKER_ALIVE_SECONDS}))::int AS workers_alive,
      (SELECT count(*) FROM run_queue WHERE state = 'pending')::int AS pending,
      (SELECT count(*) FROM run_queue WHERE state = 'running')::int AS running,
      (SELECT count(*) FROM run_queue WHERE state = 'dead')::int AS dead,
      sk_now() AS now`);
  const row = r.rows[0];
  return {
    schedules: row.schedules,
    paused: row.paused,
    workersAlive: row.workers_alive,
    pending: row.pending,
    running: row.running,
    dead: row.dead,
    now: new Date(row.now).toISOString(),
  };
}

/** One schedule's row on the Overview: what it runs, when, and its health. */
export type OverviewSchedule = {
  id: number;
  name: string;
  handler: string;
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
  catchUp: "skip" | "latest" | "all";
  enabled: boolean;
} & ScheduleHealth;

/** Live schedules by name (at most `limit`), each with its health. */
export async function listOverviewSchedules(db: Db, limit = 500): Promise<OverviewSchedule[]> {
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
    FROM schedules WHERE deleted_at IS NULL ORDER BY name LIMIT ${limit}`);
  const health = await getScheduleHealth(db, r.rows.map((s) => Number(s.id)));
  return r.rows.flatMap((s) => {
    const h = health.get(Number(s.id));
    if (!h) return [];
    return [{ id: Number(s.id), name: s.name, handler: s.handler, cron: s.cron, everySeconds: s.every_seconds, timezone: s.timezone, catchUp: s.catch_up, enabled: s.enabled, ...h }];
  });
}
