import { sql } from "drizzle-orm";
import { configDefaults } from "../config";
import type { Db } from "../db/client";

/**
 * Retention: done and skipped runs go once they are older than the retention period, or once a
 * schedule has more than its cap of newer rows. Pending, running and dead runs are never deleted
 * here: dead runs wait for a person. Age is the slot time (scheduled_for), the column the slot
 * key (schedule_id, scheduled_for DESC, slot_seq DESC) already orders, so every probe is an index range
 * scan per schedule and never a sequential scan of runs.
 *
 * It never blocks the hot path: each statement deletes at most `batchSize` rows (1,000 by default)
 * of a chunk of schedules, in its own short transaction, and the rows it deletes are finished ones
 * no claim, heartbeat or finish touches. Attempts go with their run (ON DELETE CASCADE).
 */
export type RetentionDefaults = {
  /** Days a finished or skipped run is kept unless its schedule says otherwise. */
  retentionDays: number;
  /** Rows kept per schedule unless its schedule says otherwise. */
  maxRunsPerSchedule: number;
};

export const retentionDefaults: RetentionDefaults = {
  retentionDays: configDefaults.retentionDays,
  maxRunsPerSchedule: configDefaults.retentionMaxRuns,
};

/** Advisory lock key ("sk-reten"): one sweeper at a time across all workers. */
const RETENTION_LOCK_KEY = 0x736b2d726574656en;

export type RetentionPass = {
  /** Rows deleted by this statement. */
  deleted: number;
  /** Cursor for the next pass (the last schedule id finished with; 0 after a full sweep). */
  nextScheduleId: number;
  /** True when this pass finished the last chunk of schedules: the sweep is complete. */
  sweepDone: boolean;
  /** False when another worker held the sweep lock and nothing was done. */
  ran: boolean;
};

/**
 * Delete up to `batchSize` expired runs among the `schedulesPerPass` schedules after
 * `afterScheduleId`; call repeatedly with the returned cursor to sweep every schedule.
 */
export async function deleteExpiredRuns(
  db: Db,
  opts: Partial<RetentionDefaults> & { afterScheduleId?: number; batchSize?: number; schedulesPerPass?: number } = {},
): Promise<RetentionPass> {
  const days = opts.retentionDays ?? retentionDefaults.retentionDays;
  const maxRuns = opts.maxRunsPerSchedule ?? retentionDefaults.maxRunsPerSchedule;
  const batch = opts.batchSize ?? 1000;
  const per = opts.schedulesPerPass ?? 500;
  const after = opts.afterScheduleId ?? 0;
  return db.transaction(async (tx) => {
    const lock = await tx.execute<{ ok: boolean }>(sql`SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK_KEY.toString()}::bigint) AS ok`);
    if (!lock.rows[0]?.ok) return { deleted: 0, nextScheduleId: after, sweepDone: false, ran: false };
    const chunk = await tx.execute<{ upto: number | null; n: number }>(sql`
      SELECT max(id) AS upto, count(*)::int AS n FROM (
        SELECT id FROM schedules WHERE id > ${after} ORDER BY id LIMIT ${per}) s`);
    const upto = chunk.rows[0]?.upto;
    if (upto === null || upto === undefined) return { deleted: 0, nextScheduleId: 0, sweepDone: true, ran: true };
    const del = await tx.execute(sql`
      WITH s AS (
        SELECT id, coalesce(retention_days, ${days}) AS days, coalesce(retention_max_runs, ${maxRuns}) AS max_runs
        FROM schedules WHERE id > ${after} AND id <= ${upto}
      ),
      too_old AS (
        SELECT v.id FROM s CROSS JOIN LATERAL (
          SELECT r.id FROM runs r
          WHERE r.schedule_id = s.id AND r.scheduled_for < sk_now() - make_interval(days => s.days)
            AND r.state IN ('done', 'skipped')
          ORDER BY r.scheduled_for LIMIT ${batch}) v
      ),
      over_cap AS (
        SELECT v.id FROM s CROSS JOIN LATERAL (
          SELECT r.id, r.state FROM runs r WHERE r.schedule_id = s.id
          ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST OFFSET s.max_runs LIMIT ${batch}) v
        WHERE v.state IN ('done', 'skipped')
      ),
      victims AS (SELECT id FROM too_old UNION SELECT id FROM over_cap LIMIT ${batch})
      DELETE FROM runs r USING victims v WHERE r.id = v.id`);
    const deleted = del.rowCount ?? 0;
    // A full batch may have left more in this chunk: stay on it. Otherwise move on (or wrap).
    if (deleted >= batch) return { deleted, nextScheduleId: after, sweepDone: false, ran: true };
    const last = chunk.rows[0].n < per;
    return { deleted, nextScheduleId: last ? 0 : upto, sweepDone: last, ran: true };
  });
}

export type RetentionInfo = {
  retentionDays: number;
  maxRuns: number;
  /** Finished runs with a slot before this instant are deleted. */
  keptSince: string;
  /** The oldest run still stored for the schedule (null without a schedule or without runs). */
  oldestRunAt: string | null;
  /** Runs stored for the schedule, counted up to maxRuns + 1 (null without a schedule). */
  storedRuns: number | null;
};

/**
 * How far back run history goes, globally or for one schedule: the policy in force, its cutoff on
 * the database clock, and for a schedule the oldest run still stored (one index probe).
 */
export async function getRetentionInfo(
  db: Db,
  opts: { scheduleId?: number; defaults?: Partial<RetentionDefaults> } = {},
): Promise<RetentionInfo> {
  const days = opts.defaults?.retentionDays ?? retentionDefaults.retentionDays;
  const maxRuns = opts.defaults?.maxRunsPerSchedule ?? retentionDefaults.maxRunsPerSchedule;
  const id = opts.scheduleId ?? null;
  const r = await db.execute<{ days: number; max_runs: number; kept_since: Date; oldest: Date | null; stored: number | null }>(sql`
    WITH p AS (
      SELECT coalesce(s.retention_days, ${days}) AS days, coalesce(s.retention_max_runs, ${maxRuns}) AS max_runs
      FROM (SELECT 1) one LEFT JOIN schedules s ON s.id = ${id}::bigint
    )
    SELECT p.days, p.max_runs, sk_now() - make_interval(days => p.days) AS kept_since,
      (SELECT min(scheduled_for) FROM runs WHERE schedule_id = ${id}::bigint) AS oldest,
      CASE WHEN ${id}::bigint IS NULL THEN NULL ELSE
        (SELECT count(*)::int FROM (SELECT 1 FROM runs WHERE schedule_id = ${id}::bigint LIMIT p.max_runs + 1) c) END AS stored
    FROM p`);
  const row = r.rows[0];
  return {
    retentionDays: row.days,
    maxRuns: row.max_runs,
    keptSince: new Date(row.kept_since).toISOString(),
    oldestRunAt: row.oldest ? new Date(row.oldest).toISOString() : null,
    storedRuns: row.stored,
  };
}
