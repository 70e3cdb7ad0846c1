/**
 * A schedule's health: the three numbers that tell whether a schedule is doing its job
 * (since last success, dead runs, oldest pending age) and a status derived from them.
 *
 * - late: since-last-success exceeds two intervals (10 minutes on a 5-minute job), plus a grace
 *   for the poll interval and handler time; `late_after_seconds` replaces the whole threshold and
 *   `late_grace_seconds` the grace. This catches a stopped scheduler, which error alerts never see.
 * - failing: dead runs > 0 — a run exhausted its attempts and needs a person.
 * - backlogged: the oldest due pending run has waited longer than one interval (at least a
 *   minute; `backlog_after_seconds` overrides): workers are too few or too slow.
 * - unserved: no live worker serves the schedule's handler and its oldest due pending run has
 *   waited longer than the schedule's stated worst-case lateness (lib/schedules/lateness.ts): the
 *   run waits for a worker that has the handler (routing), not for a slot. Not a status of its own.
 * - stuck: a run of the schedule keeps heartbeating far past its timeout or its usual duration
 *   (lib/runs/stuck.ts, the one definition). Not a status of its own either.
 * - paused: the schedule is disabled; its numbers are still reported.
 *
 * Ages are computed in SQL against sk_now() (one clock decides); only the threshold, which needs
 * the cron maths, is computed here. The last success is stored per schedule (schedule_last_success:
 * the latest finish of its done runs, kept by the runs triggers, read by its key); the others are
 * read through an index per schedule: run_queue_dead_idx for dead runs and run_queue_pending_idx
 * for the oldest slot still waiting — never a scan of the whole runs table.
 */
import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { pendingLastSuccess } from "../schedules/last-success";
import { typicalGapSeconds, type Timing } from "../schedules/timing";
import { worstCaseLatenessSeconds } from "../schedules/lateness";
import { unservedHandlerSchema, unservedSql } from "../runs/unserved";
import { STUCK_MIN_AFTER_SECONDS, stuckAfterSql, stuckRunSchema } from "../runs/stuck";

export const HEALTH_STATUSES = ["healthy", "late", "failing", "backlogged", "paused"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** The three health rules, evaluated independently; alerts and metrics use these, the status orders them. */
export const healthRulesSchema = z.object({ late: z.boolean(), failing: z.boolean(), backlogged: z.boolean(), unserved: z.boolean(), stuck: z.boolean() }).strict();
export type HealthRules = z.infer<typeof healthRulesSchema>;

export const scheduleHealthSchema = z
  .object({
    /** Seconds since the last run finished successfully; null when none has. */
    sinceLastSuccessSeconds: z.number().nullable(),
    /** Runs in state dead (exhausted their attempts or failed for good). */
    deadRuns: z.number().int(),
    /** Seconds the oldest due pending run has waited since its slot; null when none is waiting. */
    oldestPendingAgeSeconds: z.number().nullable(),
    status: z.enum(HEALTH_STATUSES),
    /** The since-last-success threshold above which the schedule is late (Infinity → null). */
    lateAfterSeconds: z.number().nullable(),
    /** The oldest-pending-age threshold above which the schedule is backlogged. */
    backlogAfterSeconds: z.number().nullable(),
    /** Seconds since the schedule was created: what "late" is judged by when it never succeeded. */
    ageSeconds: z.number(),
    /**
     * Set when no live worker serves the schedule's handler: the handler, and when its oldest due
     * pending run started waiting (null when none waits yet).
     */
    unservedHandler: unservedHandlerSchema.nullable(),
    /** The wait above which an unserved run breaks the unserved rule: the stated worst-case lateness. */
    unservedAfterSeconds: z.number(),
    /** The schedule's stuck run (its oldest running attempt past the stuck threshold), or null. */
    stuckRun: stuckRunSchema.nullable(),
    /** Which rules hold right now, each on its own (the status shows only the most urgent). */
    rules: healthRulesSchema,
  })
  .strict();
export type ScheduleHealth = z.infer<typeof scheduleHealthSchema>;

/** Default slack on top of two intervals: covers a poll interval and a normal handler run. */
export const DEFAULT_LATE_GRACE_SECONDS = 30;
/** The smallest default backlog threshold: a pending run younger than this is normal. */
export const MIN_BACKLOG_AFTER_SECONDS = 60;

/** The schedule fields the thresholds depend on. */
export type HealthInputs = {
  enabled: boolean;
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
  lateAfterSeconds: number | null;
  lateGraceSeconds: number | null;
  backlogAfterSeconds: number | null;
};

function timingOf(s: HealthInputs): Timing | null {
  if (s.everySeconds) return { everySeconds: s.everySeconds };
  if (s.cron) return { cron: s.cron, timezone: s.timezone };
  return null;
}

// Typical gaps of cron schedules at one instant, by expression and zone. Working one out walks the
// cron (croner) and was most of the worker's time in an alert pass; schedules share expressions
// ("0 * * * *"), and one health read uses one instant, so each is worked out once per read.
let gapsAt = Number.NaN;
const gaps = new Map<string, number>();

/** The typical gap between slots (Infinity when it never fires), worked out once per expression and instant. */
export function gapSeconds(s: HealthInputs, now: Date): number {
  const timing = timingOf(s);
  if (!timing) return Number.POSITIVE_INFINITY;
  if (timing.cron === null || timing.cron === undefined) return typicalGapOrNever(timing, now);
  if (now.getTime() !== gapsAt) {
    gaps.clear();
    gapsAt = now.getTime();
  }
  const key = `${timing.timezone} ${timing.cron}`;
  let gap = gaps.get(key);
  if (gap === undefined) {
    gap = typicalGapOrNever(timing, now);
    gaps.set(key, gap);
  }
  return gap;
}

function typicalGapOrNever(timing: Timing, now: Date): number {
  try {
    return typicalGapSeconds(timing, now);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Late threshold: `late_after_seconds`, else 2 × the typical gap + grace. Examples: every 300 s →
 * 630 s; cron `0 * * * *` → 7,230 s; with late_grace_seconds 0 a 5-minute job is late after 600 s.
 */
export function lateAfterSecondsFor(s: HealthInputs, now: Date): number {
  if (s.lateAfterSeconds !== null) return s.lateAfterSeconds;
  return 2 * gapSeconds(s, now) + (s.lateGraceSeconds ?? DEFAULT_LATE_GRACE_SECONDS);
}

/** Backlog threshold: `backlog_after_seconds`, else max(one gap, 60 s). Every 300 s → 300 s. */
export function backlogAfterSecondsFor(s: HealthInputs, now: Date): number {
  if (s.backlogAfterSeconds !== null) return s.backlogAfterSeconds;
  return Math.max(gapSeconds(s, now), MIN_BACKLOG_AFTER_SECONDS);
}

type HealthNumbers = {
  enabled: boolean;
  sinceLastSuccessSeconds: number | null;
  ageSeconds: number;
  deadRuns: number;
  oldestPendingAgeSeconds: number | null;
  /** Seconds the oldest due pending run has waited with no live worker serving its handler; null when served or none waits. */
  unservedWaitSeconds?: number | null;
  /** The stated worst-case lateness: the unserved rule's threshold. */
  unservedAfterSeconds?: number;
  /** A run of the schedule is stuck (lib/runs/stuck.ts). */
  stuck?: boolean;
};

/**
 * The one definition of late / failing / backlogged (console status, alerts and metrics all use
 * it). A schedule that never succeeded is judged by how long it has existed (`ageSeconds`), so a
 * new nightly job is not late on its first day but one that never once worked is. A paused
 * schedule breaks no rule: nobody expects it to run.
 */
export function evaluateHealthRules(n: HealthNumbers, lateAfterSeconds: number, backlogAfterSeconds: number): HealthRules {
  if (!n.enabled) return { late: false, failing: false, backlogged: false, unserved: false, stuck: false };
  return {
    stuck: n.stuck === true,
    unserved: n.unservedWaitSeconds != null && n.unservedAfterSeconds !== undefined && n.unservedWaitSeconds > n.unservedAfterSeconds,
    failing: n.deadRuns > 0,
    late: (n.sinceLastSuccessSeconds ?? n.ageSeconds) > lateAfterSeconds,
    backlogged: n.oldestPendingAgeSeconds !== null && n.oldestPendingAgeSeconds > backlogAfterSeconds,
  };
}

/** The status from the numbers, most urgent first: paused, failing, late, backlogged, healthy. */
export function deriveStatus(n: HealthNumbers, lateAfterSeconds: number, backlogAfterSeconds: number): HealthStatus {
  if (!n.enabled) return "paused";
  const rules = evaluateHealthRules(n, lateAfterSeconds, backlogAfterSeconds);
  if (rules.failing) return "failing";
  if (rules.late) return "late";
  if (rules.backlogged) return "backlogged";
  return "healthy";
}

type Row = {
  id: number;
  enabled: boolean;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  late_after_seconds: number | null;
  late_grace_seconds: number | null;
  backlog_after_seconds: number | null;
  jitter_seconds: number;
  lease_seconds: number;
  handler: string;
  unserved: boolean;
  unserved_since: Date | null;
  unserved_wait: number | null;
  stuck_run_id: number | null;
  running_since: Date | null;
  stuck_since: Date | null;
  stuck_after: number | null;
  since_last_success: number | null;
  dead_runs: number;
  oldest_pending_age: number | null;
  age: number;
  now: Date;
};

/** Health for each of the given schedules (deleted ones included if asked for by id). */
export async function getScheduleHealth(db: Pick<Db, "execute">, scheduleIds: number[]): Promise<Map<number, ScheduleHealth>> {
  return (await getScheduleHealthAt(db, scheduleIds)).health;
}

/**
 * Health as getScheduleHealth reads it, with the one database clock reading (`at`) its ages were
 * measured against: the alert pass turns ages into the instants a verdict would change (null when
 * no schedule was found).
 */
export async function getScheduleHealthAt(db: Pick<Db, "execute">, scheduleIds: number[]): Promise<{ at: Date | null; health: Map<number, ScheduleHealth> }> {
  const out = new Map<number, ScheduleHealth>();
  if (scheduleIds.length === 0) return { at: null, health: out };
  let at: Date | null = null;
  // The last success is stored per schedule (schedule_last_success, as of the last alert pass),
  // with the successes logged since and not applied yet (lib/schedules/last-success.ts).
  // One clock reading for the whole read: sk_now() is a function PostgreSQL cannot inline, and
  // called bare it would run five times per schedule.
  const r = await db.execute<Row>(sql`
    SELECT s.id, s.enabled, s.cron, s.every_seconds, s.timezone,
      s.late_after_seconds, s.late_grace_seconds, s.backlog_after_seconds, s.jitter_seconds, s.lease_seconds, s.handler,
      un.unserved, CASE WHEN un.unserved THEN ow.run_after END AS unserved_since,
      CASE WHEN un.unserved THEN extract(epoch FROM c.now - ow.run_after)::float8 END AS unserved_wait,
      rn.run_id AS stuck_run_id, rn.started_at AS running_since, st.after_seconds AS stuck_after,
      CASE WHEN rn.started_at + make_interval(secs => st.after_seconds) < c.now THEN rn.started_at + make_interval(secs => st.after_seconds) END AS stuck_since,
      extract(epoch FROM c.now - greatest(ls.last_success_at, pl.at))::float8 AS since_last_success,
      (SELECT count(*) FROM run_queue d WHERE d.schedule_id = s.id AND d.state = 'dead')::int AS dead_runs,
      extract(epoch FROM c.now - op.scheduled_for)::float8 AS oldest_pending_age,
      greatest(0, extract(epoch FROM c.now - s.created_at))::float8 AS age,
      c.now
    FROM (SELECT sk_now() AS now OFFSET 0) c
    CROSS JOIN schedules s
    LEFT JOIN schedule_last_success ls ON ls.schedule_id = s.id
    LEFT JOIN (${pendingLastSuccess(sql`${sql.param(scheduleIds)}::bigint[]`)}) pl ON pl.schedule_id = s.id
    LEFT JOIN LATERAL (
      SELECT p.scheduled_for FROM run_queue p
      WHERE p.schedule_id = s.id AND p.state = 'pending' AND p.scheduled_for <= c.now
      ORDER BY p.scheduled_for LIMIT 1
    ) op ON true
    -- Routing: no live worker serves the handler, and the oldest due pending run (by slot) waits since its run_after.
    CROSS JOIN LATERAL (SELECT ${unservedSql(sql`s.handler`)} AS unserved) un
    LEFT JOIN LATERAL (
      SELECT p.run_after FROM run_queue p
      WHERE un.unserved AND p.schedule_id = s.id AND p.state = 'pending' AND p.run_after <= c.now
      ORDER BY p.scheduled_for LIMIT 1
    ) ow ON true
    -- Stuck (lib/runs/stuck.ts): the oldest running attempt with a live lease old enough to be stuck
    -- (run_queue_running_idx), then the schedule's threshold, read only for such a schedule.
    LEFT JOIN LATERAL (
      SELECT p.run_id, p.started_at FROM run_queue p
      WHERE p.schedule_id = s.id AND p.state = 'running' AND p.lease_expires_at > c.now
        AND p.started_at <= c.now - make_interval(secs => ${STUCK_MIN_AFTER_SECONDS})
      ORDER BY p.started_at LIMIT 1
    ) rn ON true
    LEFT JOIN LATERAL (SELECT ${stuckAfterSql("s")} AS after_seconds WHERE rn.run_id IS NOT NULL) st ON true
    WHERE s.id = ANY(${sql.param(scheduleIds)}::bigint[])`);
  for (const row of r.rows) {
    const inputs: HealthInputs = {
      enabled: row.enabled,
      cron: row.cron,
      everySeconds: row.every_seconds,
      timezone: row.timezone,
      lateAfterSeconds: row.late_after_seconds,
      lateGraceSeconds: row.late_grace_seconds,
      backlogAfterSeconds: row.backlog_after_seconds,
    };
    const now = new Date(row.now);
    at = now;
    const lateAfter = lateAfterSecondsFor(inputs, now);
    const backlogAfter = backlogAfterSecondsFor(inputs, now);
    const numbers = {
      enabled: row.enabled,
      sinceLastSuccessSeconds: row.since_last_success === null ? null : Math.max(0, row.since_last_success),
      ageSeconds: row.age,
      deadRuns: row.dead_runs,
      oldestPendingAgeSeconds: row.oldest_pending_age === null ? null : Math.max(0, row.oldest_pending_age),
      unservedWaitSeconds: row.unserved_wait === null ? null : Math.max(0, row.unserved_wait),
      unservedAfterSeconds: worstCaseLatenessSeconds({ jitterSeconds: row.jitter_seconds, leaseSeconds: row.lease_seconds }),
      stuck: row.stuck_since !== null,
    };
    out.set(Number(row.id), {
      sinceLastSuccessSeconds: numbers.sinceLastSuccessSeconds,
      deadRuns: numbers.deadRuns,
      oldestPendingAgeSeconds: numbers.oldestPendingAgeSeconds,
      status: deriveStatus(numbers, lateAfter, backlogAfter),
      lateAfterSeconds: Number.isFinite(lateAfter) ? lateAfter : null,
      backlogAfterSeconds: Number.isFinite(backlogAfter) ? backlogAfter : null,
      ageSeconds: numbers.ageSeconds,
      unservedHandler: row.unserved ? { handler: row.handler, since: row.unserved_since ? new Date(row.unserved_since).toISOString() : null } : null,
      unservedAfterSeconds: numbers.unservedAfterSeconds,
      stuckRun:
        row.stuck_since !== null
          ? { runId: Number(row.stuck_run_id), startedAt: new Date(row.running_since!).toISOString(), since: new Date(row.stuck_since).toISOString(), afterSeconds: Number(row.stuck_after) }
          : null,
      rules: evaluateHealthRules(numbers, lateAfter, backlogAfter),
    });
  }
  return { at, health: out };
}
